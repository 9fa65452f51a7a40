// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol
import SpeakerWatch
import Testing

/// The session lifecycle a watcher draws from a speaker's topics: each case
/// states every event it expects, so an extra or a missing one fails.
@Suite struct LifecycleTests {
    typealias S = FleetScript

    @Test func aSessionStartsUpdatesAndEndsOnce() {
        var s = S()
        #expect(s.events(S.message(S.session(1, id: nil, playing: false, ended: true))) == [], "idle at boot: nothing")
        #expect(s.events(S.message(S.session(2))) == ["start kitchen s1 2"])
        #expect(s.events(S.message(S.session(3, playing: false))) == ["update kitchen s1 3"])
        #expect(s.events(S.message(S.session(4, playing: false, ended: true))) == ["end kitchen s1 4"])
        #expect(s.events(S.message(S.session(5, id: "s1", playing: false, ended: true, sound: "surf"))) == [],
                "a change while idle is no session event")
        #expect(s.events(S.message(S.session(6, id: "s2"))) == ["start kitchen s2 6"])
    }

    @Test func duplicatesAndOlderRevisionsAreDropped() {
        var s = S()
        #expect(s.events(S.message(S.session(10)), S.message(S.session(10)), S.message(S.session(9, playing: false))) ==
                ["start kitchen s1 10"])
        let drops = s.deliver(S.message(S.session(10)))
        #expect(drops == [.dropped(deviceID: "kitchen", StaleSession(reason: .revision(received: 10, applied: 10)))])
        #expect(s.events(S.message(S.session(12, ended: true)), S.message(S.session(11, playing: false))) == ["end kitchen s1 12"],
                "a late revision after the end does not restart it")
        #expect(s.events(S.message(S.session(12, ended: true))) == [], "the end's redelivery ends nothing twice")
    }

    @Test func reorderedTopicsAndAMissedEnd() {
        var s = S()
        // device and catalog after the session, a session with a new id that
        // skipped the old one's end: the old one ends (inferred) first.
        #expect(s.events(S.message(S.session(1)), S.message(leaf: "device", S.device().serialized()),
                         S.message(leaf: "catalog", CatalogEntry.serialized([CatalogEntry(id: "rain", name: "Rain", summary: "")])))
                == ["start kitchen s1 1"])
        #expect(s.fleet.speakers["kitchen"]?.catalog?.map(\.id) == ["rain"])
        #expect(s.events(S.message(S.session(5, id: "s2"))) == ["end kitchen s1 1 inferred", "start kitchen s2 5"])
        #expect(s.events(S.message(S.session(6, id: "s2", playing: false, ended: true))) == ["end kitchen s2 6"])
    }

    /// A reconnect (the watcher's or the speaker's) re-delivers the retained
    /// payloads and the speaker republishes the same ones: no event.
    @Test func reconnectsAndBrokerRestartsRepeatNoEvent() {
        var s = S()
        #expect(s.events(S.message(S.session(7)), S.message(leaf: "availability", Array("online".utf8))) == ["start kitchen s1 7"])
        // Watcher reconnect: the retained copies again.
        #expect(s.events(S.message(S.session(7), retained: true), S.message(leaf: "device", S.device().serialized(), retained: true)) == [])
        // Broker restart without persistence: the speaker's will, then its republished state.
        #expect(s.events(S.message(leaf: "availability", Array("offline".utf8)), S.message(S.session(7)),
                         S.message(leaf: "availability", Array("online".utf8))) == [])
        #expect(s.fleet.speakers["kitchen"]?.online == true)
        // Broker restart with persistence and a stale retained session from long ago.
        #expect(s.events(S.message(S.session(3, id: "old"), retained: true)) == [])
        // Speaker restart: revisions continue in the same epoch, the session resumes.
        #expect(s.events(S.message(S.session(1001))) == ["update kitchen s1 1001"])
    }

    /// A re-flash: the counter starts over in a new epoch; the watermark
    /// resets, the old session ends, and the old epoch's late messages are stale.
    @Test func aReflashStartsANewEpoch() {
        var s = S()
        #expect(s.events(S.message(S.session(5000))) == ["start kitchen s1 5000"])
        let fresh = S.device(epoch: "e2")
        #expect(s.events(S.message(S.session(1, id: nil, playing: false, ended: true, device: fresh))) ==
                ["end kitchen s1 5000 inferred"])
        #expect(s.fleet.speakers["kitchen"]?.epoch == "e2" && s.fleet.speakers["kitchen"]?.watermark == 1)
        #expect(s.events(S.message(S.session(2, id: "t1", device: fresh))) == ["start kitchen t1 2"])
        let late = s.deliver(S.message(S.session(5001)))
        #expect(late == [.dropped(deviceID: "kitchen", StaleSession(reason: .leftEpoch("e1")))])
        #expect(s.events(S.message(S.session(3, id: "t1", playing: false, device: fresh))) == ["update kitchen t1 3"])
        // A device payload of the left epoch does not replace the current one.
        _ = s.deliver(S.message(leaf: "device", S.device(epoch: "e1", level: 0.9).serialized()))
        #expect(s.fleet.speakers["kitchen"]?.device?.epoch == "e2")
        // An upgrade from a speaker without epochs: nil, then an epoch; revisions go on.
        var u = S()
        #expect(u.events(S.message(S.session(40, device: S.device(epoch: nil))), S.message(S.session(41))) ==
                ["start kitchen s1 40", "update kitchen s1 41"])
    }

    @Test func speakersAreFollowedApartAndBadInputIsNamed() {
        var s = S()
        #expect(s.events(S.message(S.session(1), device: "hall"), S.message(S.session(1), device: "den")) ==
                ["start hall s1 1", "start den s1 1"])
        let bad = s.deliver(S.message(leaf: "session", Array(#"{"id":"x"}"#.utf8)),
                            S.message(leaf: "session", Array("nope".utf8)),
                            S.message(leaf: "availability", Array("maybe".utf8)),
                            WatchMessage(topic: "ambient-speaker/Bad_ID/session", payload: [1]),
                            S.message(leaf: "event", Array("{}".utf8)))
        #expect(bad.count == 3, "\(bad)")
        guard bad.count == 3, case .problem(let missing) = bad[0], case .problem(let notJSON) = bad[1],
              case .problem(let availability) = bad[2] else { return }
        #expect(missing == "ambient-speaker/kitchen/session: soundID: missing")
        #expect(notJSON.hasPrefix("ambient-speaker/kitchen/session: not JSON"))
        #expect(availability == #"ambient-speaker/kitchen/availability: expected online or offline, got "maybe""#)
        #expect(s.deliver(S.message(leaf: "session", [])) == [], "a cleared retained topic")
    }

    @Test func theJSONLineCarriesTheEventTheDeviceTheSessionAndTheTime() throws {
        var s = S()
        let outputs = s.deliver(S.message(S.session(2)))
        guard case .lifecycle(let event)? = outputs.first else { Issue.record("\(outputs)"); return }
        let line = try JSONParser().parse(event.jsonLine(at: "2026-12-02T03:00:01.000Z"))
        #expect(line["event"] == .string("start") && line["device"] == .string("kitchen") && line["epoch"] == .string("e1"))
        #expect(line["at"] == .string("2026-12-02T03:00:01.000Z"))
        #expect(line["session"] == S.session(2).json)
        #expect(line["inferred"] == nil)
    }
}
