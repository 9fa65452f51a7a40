// SPDX-License-Identifier: Apache-2.0
import SeededRandom
import Testing
import SpeakerCore
import SpeakerProtocol

/// The absolute invariant: a subscriber never sees a `session` revision that
/// is not greater than every revision it saw before — across restarts, power
/// cuts and disk faults. When the speaker cannot guarantee it, it withholds
/// `session` and says why.
@Suite struct RevisionTests {
    static let readOnly = "open(/var/lib/ambient-speaker/.revision.tmp-1-a): Read-only file system (errno 30)"

    func revisions(_ fx: [SpeakerEffect]) -> [UInt64] {
        fx.published("session").compactMap { $0["revision"]?.numberValue.map { UInt64($0) } }
    }

    func logs(_ fx: [SpeakerEffect], _ level: CoreLogLevel) -> [String] {
        fx.compactMap { if case .log(level, let text) = $0 { return text } else { return nil } }
    }

    @Test func aReadOnlyStateDirectoryAtStartWithholdsSessionSaysWhyAndResumesWhenWritable() {
        var h = Harness()
        h.reservationFailure = Self.readOnly
        let start = h.send(.start(at: h.now))
        #expect(start.published("session").isEmpty, "no revision is published that is not durably reserved")
        #expect(start.lastPublished("device")?["problem"]?.stringValue?.contains("Read-only file system") == true)
        #expect(logs(start, .error).count == 1)
        #expect(logs(start, .error).first?.contains("session publishing stopped") == true)
        #expect(h.state.publishing.sessionWithheld != nil)

        // A remote command is refused and changes nothing; the knob still works locally.
        let refused = h.command(#"{"id":"c1","action":"setVolume","level":0.9}"#)
        #expect(refused.lastPublished("command/result")?["error"]?["code"] == .string("state-unavailable"))
        #expect(refused.published("command/result").count == 1)
        #expect(h.state.volume.level == .absolute(level: 0.4))
        var turned: [SpeakerEffect] = []
        for e in QuadratureDecoderTests.cycle(clockwise: true) { turned += h.edge(e.phaseA ? .encoderA : .encoderB, e.level, afterMs: 3) }
        #expect(h.state.volume.level == .absolute(level: 0.45))
        #expect(turned.published("session").isEmpty)

        // Retries every 5 s; each failure is quiet (no new error line).
        let retried = h.advance(ms: PublishingState.reservationRetryMs)
        #expect(retried.contains(.reserveRevisions(through: 1000)))
        #expect(logs(retried, .error).isEmpty && revisions(retried).isEmpty)

        // The disk is writable again: the next retry publishes, and says so.
        h.reservationFailure = nil
        let resumed = h.advance(ms: PublishingState.reservationRetryMs)
        #expect(revisions(resumed) == [1])
        #expect(resumed.lastPublished("session")?["devices"]?.arrayFirst?["volume"]?["level"] == .number(0.45))
        #expect(resumed.lastPublished("device")?["problem"] == nil)
        #expect(logs(resumed, .notice).contains { $0.contains("session publishing resumed") })
        #expect(h.state.publishing.sessionWithheld == nil && h.speaker.nextDeadline == nil)
        let ok = h.command(#"{"id":"c2","action":"setVolume","level":0.3}"#)
        #expect(ok.lastPublished("command/result")?.jsonText == #"{"id":"c2","ok":true,"revision":2,"level":0.3}"#)
    }

    @Test func aFullDiskIsFoundAheadTheReservedRestIsUsedThenCommandsAreRefusedBeforeTheyChangeAnything() {
        var h = Harness(revisionReservation: 1000)
        var seen = revisions(h.send(.start(at: h.now)))
        #expect(h.reservations == [2000], "the next block is reserved at once: less than half a block was left")
        h.reservationFailure = "write(/var/lib/ambient-speaker/.revision.tmp): No space left on device (errno 28)"
        var fx: [SpeakerEffect] = []
        var i = 0
        while h.state.publishing.sessionWithheld == nil && i < 5000 {
            fx += h.command(#"{"id":"v\#(i)","action":"setVolume","level":\#(i % 2 == 0 ? 0.1 : 0.2)}"#)
            i += 1
        }
        seen += revisions(fx)
        #expect(h.reservations == [2000, 3000], "asked once at half a block; retried only on the timer")
        #expect(logs(fx, .warning).count == 1, "the first failure is a warning while revisions remain")
        #expect(logs(fx, .error).count == 1, "stopping is one error line")
        #expect(seen.last == 2000, "the reserved rest is used up to the durable reservation, and no further")
        #expect(fx.published("command/result").allSatisfy { $0["ok"] == .bool(true) }, "no command was applied and then refused")
        let level = h.state.volume.level
        let refused = h.command(#"{"id":"over","action":"setVolume","level":0.8}"#)
        #expect(revisions(refused).isEmpty)
        #expect(refused.lastPublished("command/result")?["error"]?["code"] == .string("state-unavailable"))
        #expect(h.state.volume.level == level, "the refused command changed nothing")

        // Power cut: the disk still says 2000, the broker holds 2000.
        var after = Harness(revisionReservation: 2000)
        seen += revisions(after.send(.start(at: after.now)))
        #expect(seen.last == 2001)
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 < $1 })
    }

    @Test func aResultWaitingForTheSessionIsAnsweredOnceWhenTheReservationFails() {
        // The runtime answers reservations at once; a slower runner (or a
        // future asynchronous one) can let a command in between.
        var h = Harness()
        let start = h.speaker.reduce(.start(at: h.now))
        #expect(start.contains(.reserveRevisions(through: 1000)) && revisions(start).isEmpty)
        let applied = h.speaker.reduce(.command(IncomingCommand(payload: Array(#"{"id":"w","action":"volumeUp"}"#.utf8)), at: h.now))
        #expect(applied.published("command/result").isEmpty, "the result waits for the session that shows it")
        let fx = h.speaker.reduce(.revisionReservation(through: 1000, failure: "rename: Read-only file system (errno 30)", at: h.now))
        #expect(fx.published("command/result").count == 1)
        #expect(fx.lastPublished("command/result")?["error"]?["code"] == .string("state-unavailable"))
        #expect(fx.lastPublished("command/result")?["error"]?["message"]?.stringValue?.hasPrefix("done, but") == true)
        #expect(revisions(fx).isEmpty)
    }

    @Test func aReservationNearTheTopIsUsedUpThenWithheldWithoutTrapping() {
        let top = RevisionCounter.maximum
        #expect(top == 9_007_199_254_740_991)
        var h = Harness(revisionReservation: top - 2)
        var seen = revisions(h.send(.start(at: h.now)))
        #expect(h.reservations == [top], "the block is clamped to the maximum")
        let last = h.command(#"{"id":"a","action":"setVolume","level":0.2}"#)
        seen += revisions(last)
        #expect(seen == [top - 1, top])
        #expect(h.state.publishing.sessionWithheld?.contains("exhausted") == true)
        #expect(logs(last, .error).count == 1)
        #expect(last.lastPublished("device")?["problem"]?.stringValue?.contains("exhausted") == true)
        let fx = h.command(#"{"id":"c","action":"setVolume","level":0.3}"#)
        #expect(revisions(fx).isEmpty && logs(fx, .error).isEmpty)
        #expect(fx.lastPublished("command/result")?["error"]?["code"] == .string("state-unavailable"))
        #expect(h.state.volume.level == .absolute(level: 0.2))
        #expect(h.state.publishing.reservationRetryAt == nil, "nothing to retry")

        for stored in [top, top + 1, UInt64.max - 1, UInt64.max] {
            var full = Harness(revisionReservation: stored)
            let start = full.send(.start(at: full.now))
            #expect(revisions(start).isEmpty && full.reservations.isEmpty)
            #expect(start.lastPublished("device")?["problem"]?.stringValue?.contains("exhausted") == true)
            #expect(full.command(#"{"id":"x","action":"play"}"#).lastPublished("command/result")?["error"]?["code"]
                    == .string("state-unavailable"))
        }
    }

    @Test func anUnreadableReservationWithholdsSessionForTheWholeRun() {
        var h = Harness()
        h.speaker = Speaker(config: h.speaker.config, catalog: Harness.catalog,
                            environment: SpeakerEnvironment(wallClock: { WallClockReading(seconds: 0, milliseconds: 0) },
                                                            clockSynced: { false }, newSessionID: { "s" }, software: "t"),
                            revisions: RevisionCounter(unreadableReservation: "revision does not hold a revision number", epoch: "e1"))
        let start = h.send(.start(at: h.now))
        #expect(revisions(start).isEmpty && h.reservations.isEmpty)
        #expect(logs(start, .error).first?.contains("restarted") == true)
        #expect(h.state.publishing.reservationRetryAt == nil, "no retry: there is no safe base to reserve from")
        #expect(revisions(h.advance(ms: 60_000)).isEmpty)
    }

    /// Seeded random use with a disk that fails and recovers, and restarts
    /// from whatever reservation is durable: what a subscriber sees only increases.
    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8])
    func revisionsOnlyIncreaseAcrossRandomDiskFaultsAndRestarts(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var durable: UInt64 = 0
        var lastSeen: UInt64 = 0
        var violations = 0
        var published = 0
        for _ in 0..<6 {  // runs, each ended by a power cut
            var h = Harness(revisionReservation: durable)
            var fx = h.send(.start(at: h.now))
            for step in 0..<600 {
                if random.next() % 50 == 0 { h.reservationFailure = random.next() % 2 == 0 ? nil : "No space left on device" }
                switch random.next() % 4 {
                case 0: fx += h.command(#"{"id":"s\#(step)-\#(random.next() % 1000)","action":"setVolume","level":0.\#(random.next() % 10)}"#)
                case 1: fx += h.commandDone(#"{"id":"t\#(step)-\#(random.next() % 1000)","action":"toggle"}"#)
                case 2: fx += h.advance(ms: Int(random.next() % 6000))
                default: fx += h.command(#"{"id":"n\#(step)-\#(random.next() % 1000)","action":"next"}"#)
                }
                for r in revisions(fx) {
                    if r <= lastSeen { violations += 1 }
                    lastSeen = max(lastSeen, r)
                    published += 1
                }
                fx = []
            }
            // Only reservations the disk took are on it for the next run.
            durable = h.state.publishing.revision.reservedThrough
        }
        #expect(violations == 0)
        #expect(published > 100)
    }
}

