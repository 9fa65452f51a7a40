// SPDX-License-Identifier: Apache-2.0
import Testing
import SpeakerCore
import SpeakerProtocol

/// A sound without a playable source (a file gone or unreadable): the audio
/// service reports it, and the core decides — log it, let the engine play on
/// with what it has, and still get the ticket answered.
@Suite struct NoSourceTests {
    @Test func aSoundWithoutSourceResumesAndTheTicketIsStillAnswered() {
        var h = Harness()
        h.send(.start(at: h.now))
        let play = h.command(#"{"id":"p","action":"play"}"#)
        guard case let .play(sound, fade, ticket)? = play.audioRequests.first else {
            Issue.record("no play request: \(play)")
            return
        }
        let fx = h.send(.engine(.noSource(soundID: sound, reason: "cannot be played: gone", fadeMs: fade, ticket: ticket), at: h.now))
        #expect(fx == [.log(.error, "sound \"\(sound)\" cannot be played: gone"), .audio(.resume(fadeMs: fade, ticket: ticket))])
        #expect(!h.state.transport.session.isPlaying)
        let answered = h.send(.engine(.playing(ticket: ticket), at: h.now))
        #expect(h.state.transport.session.isPlaying)
        #expect(answered.lastPublished("command/result")?["ok"] == .bool(true))
    }
}
