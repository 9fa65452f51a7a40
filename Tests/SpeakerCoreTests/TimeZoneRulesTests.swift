// SPDX-License-Identifier: Apache-2.0
import Testing
import SpeakerCore

/// The TZif reader against the system's real zones: offsets either side of
/// DST changes in both hemispheres, the footer rule past 2037, and the one
/// instant chosen for a skipped or a repeated local time.
@Suite struct TimeZoneRulesTests {
    @Test func berlinChangesAtOneUTCOnTheLastSundays() {
        let berlin = zone("Europe/Berlin")
        #expect(berlin.name == "Europe/Berlin")
        let spring = utcSeconds(2026, 3, 29, 1, 0)
        #expect(berlin.offset(atUTC: spring - 1) == 3600)
        #expect(berlin.offset(atUTC: spring) == 7200)
        let autumn = utcSeconds(2026, 10, 25, 1, 0)
        #expect(berlin.offset(atUTC: autumn - 1) == 7200)
        #expect(berlin.offset(atUTC: autumn) == 3600)
    }

    @Test func newYorkAndSydneyChangeOnTheirOwnDates() {
        let ny = zone("America/New_York")
        #expect(ny.offset(atUTC: utcSeconds(2026, 3, 8, 7, 0) - 1) == -5 * 3600)
        #expect(ny.offset(atUTC: utcSeconds(2026, 3, 8, 7, 0)) == -4 * 3600)
        #expect(ny.offset(atUTC: utcSeconds(2026, 11, 1, 6, 0)) == -5 * 3600)
        let sydney = zone("Australia/Sydney")
        // Southern hemisphere: daylight time over the new year.
        #expect(sydney.offset(atUTC: utcSeconds(2026, 1, 15, 0, 0)) == 11 * 3600)
        #expect(sydney.offset(atUTC: utcSeconds(2026, 7, 15, 0, 0)) == 10 * 3600)
        // 2026-04-05 03:00 AEDT = 2026-04-04 16:00Z: back to standard time.
        #expect(sydney.offset(atUTC: utcSeconds(2026, 4, 4, 16, 0) - 1) == 11 * 3600)
        #expect(sydney.offset(atUTC: utcSeconds(2026, 4, 4, 16, 0)) == 10 * 3600)
    }

    @Test func theFooterRuleCarriesPastTheLastTransition() {
        let berlin = zone("Europe/Berlin"), ny = zone("America/New_York"), sydney = zone("Australia/Sydney")
        #expect(berlin.offset(atUTC: utcSeconds(2100, 7, 1, 12, 0)) == 7200)
        #expect(berlin.offset(atUTC: utcSeconds(2100, 1, 1, 12, 0)) == 3600)
        // 2100-03-28 is the last Sunday of March: 01:00Z the change.
        #expect(berlin.offset(atUTC: utcSeconds(2100, 3, 28, 1, 0) - 1) == 3600)
        #expect(berlin.offset(atUTC: utcSeconds(2100, 3, 28, 1, 0)) == 7200)
        #expect(ny.offset(atUTC: utcSeconds(2100, 7, 1, 12, 0)) == -4 * 3600)
        #expect(sydney.offset(atUTC: utcSeconds(2100, 1, 1, 12, 0)) == 11 * 3600)
        #expect(sydney.offset(atUTC: utcSeconds(2100, 7, 1, 12, 0)) == 10 * 3600)
    }

    @Test func aSkippedLocalTimeIsTheInstantPastTheGapAndARepeatedOneTheFirst() {
        let berlin = zone("Europe/Berlin")
        // 02:30 does not exist on 2026-03-29: it is 03:30 CEST = 01:30Z.
        #expect(berlin.utc(fromLocal: utcSeconds(2026, 3, 29, 2, 30)) == utcSeconds(2026, 3, 29, 1, 30))
        // 02:30 happens twice on 2026-10-25: the first (CEST, 00:30Z).
        #expect(berlin.utc(fromLocal: utcSeconds(2026, 10, 25, 2, 30)) == utcSeconds(2026, 10, 25, 0, 30))
        #expect(berlin.utc(fromLocal: utcSeconds(2026, 7, 1, 12, 0)) == utcSeconds(2026, 7, 1, 10, 0))
        let ny = zone("America/New_York")
        #expect(ny.utc(fromLocal: utcSeconds(2026, 3, 8, 2, 30)) == utcSeconds(2026, 3, 8, 7, 30))
        #expect(ny.utc(fromLocal: utcSeconds(2026, 11, 1, 1, 30)) == utcSeconds(2026, 11, 1, 5, 30))
    }

    @Test func garbageIsRefusedNotGuessed() {
        #expect(throws: TimeZoneRules.ParseError.self) { try TimeZoneRules(name: "x", tzif: Array("not a zone".utf8)) }
        var truncated = Array(zone("Europe/Berlin").name.utf8)
        truncated = Array("TZif2".utf8) + [UInt8](repeating: 0, count: 15) + [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9]
        #expect(throws: TimeZoneRules.ParseError.self) { try TimeZoneRules(name: "x", tzif: truncated) }
        #expect(TimeZoneRules.utc.offset(atUTC: 0) == 0)
    }
}
