// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol
import SpeakerWatch
import Testing

/// Commands through a watcher: each completes once, with the good result and
/// the session it names, or a typed failure; time is manual.
@Suite struct CommandTests {
    typealias S = FleetScript

    final class Outcomes {
        var all: [Result<CommandSuccess, CommandFailure>] = []
    }

    func watcher() -> (FleetWatcher, RecordingWatchLink, Outcomes) {
        let link = RecordingWatchLink()
        let watcher = FleetWatcher(prefix: S.prefix, link: link, onEvent: { _ in })
        watcher.receive(S.message(S.session(1, id: nil, playing: false, ended: true)), now: 0)
        return (watcher, link, Outcomes())
    }

    func result(_ json: String) -> WatchMessage { S.message(leaf: "command/result", Array(json.utf8)) }

    @Test func aGoodResultWaitsForTheSessionItNames() throws {
        let (w, link, out) = watcher()
        w.send(.play, id: "c-1", to: "kitchen", now: 10, timeoutMs: 5_000) { out.all.append($0) }
        #expect(link.published == [WatchMessage(topic: "ambient-speaker/kitchen/command",
                                                payload: Array(#"{"id":"c-1","action":"play"}"#.utf8))])
        w.receive(result(#"{"id":"c-1","ok":true,"revision":2}"#), now: 20)
        #expect(out.all.isEmpty, "the result alone is not the state")
        w.receive(S.message(S.session(2)), now: 30)
        #expect(try out.all.map { try $0.get().session.revision } == [2])
        w.tick(now: 10_000)
        #expect(out.all.count == 1, "completed once")
    }

    @Test func aSessionBeforeItsResultCompletesAtTheResult() throws {
        let (w, _, out) = watcher()
        w.send(.setVolume(level: 2), id: "c-2", to: "kitchen", now: 0, timeoutMs: 5_000) { out.all.append($0) }
        w.receive(S.message(S.session(3)), now: 1)
        #expect(out.all.isEmpty)
        w.receive(result(#"{"id":"c-2","ok":true,"revision":3,"level":1}"#), now: 2)
        let success = try #require(try out.all.first?.get())
        #expect(success.revision == 3 && success.level == 1 && success.session.revision == 3)
    }

    @Test func refusalsAreTypedAndOthersResultsIgnored() {
        let (w, _, out) = watcher()
        w.send(.select(soundID: "jazz"), id: "c-3", to: "kitchen", now: 0, timeoutMs: 5_000) { out.all.append($0) }
        w.receive(result(#"{"id":"someone-else","ok":true,"revision":9}"#), now: 1)
        w.receive(result(#"{"id":"c-3","ok":false,"error":{"code":"unknown-sound","message":"no sound \"jazz\""}}"#), now: 2)
        #expect(out.all == [.failure(.rejected(code: .unknownSound, message: #"no sound "jazz""#))])
    }

    @Test func timeoutsSayWhatWasMissing() {
        let (w, _, out) = watcher()
        w.send(.pause, id: "c-4", to: "kitchen", now: 0, timeoutMs: 1_000) { out.all.append($0) }
        w.send(.stop, id: "c-5", to: "kitchen", now: 0, timeoutMs: 2_000) { out.all.append($0) }
        w.receive(result(#"{"id":"c-5","ok":true,"revision":8}"#), now: 5)
        #expect(w.nextDeadline == 1_000)
        w.tick(now: 999)
        #expect(out.all.isEmpty)
        w.tick(now: 1_000)
        #expect(out.all == [.failure(.timedOut(resultSeen: false))])
        w.tick(now: 2_000)
        #expect(out.all.last == .failure(.timedOut(resultSeen: true)))
        #expect(w.nextDeadline == nil)
    }

    @Test func aNewEpochBeforeTheSessionFailsTheWait() {
        let (w, _, out) = watcher()
        w.send(.play, id: "c-6", to: "kitchen", now: 0, timeoutMs: 5_000) { out.all.append($0) }
        w.receive(result(#"{"id":"c-6","ok":true,"revision":2}"#), now: 1)
        w.receive(S.message(S.session(1, device: S.device(epoch: "e2"))), now: 2)
        #expect(out.all == [.failure(.speakerStartedOver)])
    }

    @Test func duplicateIDsBadDevicesAndNoConnection() {
        let (w, link, out) = watcher()
        w.send(.play, id: "same", to: "kitchen", now: 0, timeoutMs: 5_000) { out.all.append($0) }
        w.send(.play, id: "same", to: "kitchen", now: 0, timeoutMs: 5_000) { out.all.append($0) }
        w.send(.play, id: "x", to: "Not/A+Device", now: 0, timeoutMs: 5_000) { out.all.append($0) }
        link.connected = false
        w.send(.play, id: "offline", to: "kitchen", now: 0, timeoutMs: 5_000) { out.all.append($0) }
        #expect(out.all == [.failure(.duplicateID("same")), .failure(.invalidDevice("Not/A+Device")), .failure(.notSent)])
        #expect(link.published.count == 1)
    }
}
