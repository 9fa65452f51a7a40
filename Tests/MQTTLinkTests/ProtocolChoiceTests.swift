// SPDX-License-Identifier: Apache-2.0
@testable import MQTTLink
import Testing

/// Which protocol level the link's next CONNECT uses, from how the broker
/// answered the attempts before: every path of `ProtocolChoice`.
@Suite struct ProtocolChoiceTests {
    @Test func theExactRefusalFallsBackForGood() {
        var choice = ProtocolChoice()
        #expect(choice.after(.refusedVersion) == .fellBackOnRefusal)
        #expect(choice.level == .v311)
        #expect(choice.after(.closedUnanswered) == nil, "settled: a later close changes nothing")
        #expect(choice.after(.refusedVersion) == nil, "3.1.1 refused too is a protocol mismatch, reported, no change")
        #expect(choice.level == .v311)
    }

    @Test func aCloseOnV5TriesV311AndAnAcceptanceKeepsIt() {
        var choice = ProtocolChoice()
        #expect(choice.after(.failed) == nil, "no TCP connection says nothing")
        #expect(choice.level == .v5)
        #expect(choice.after(.closedUnanswered) == .triesV311AfterClose)
        #expect(choice.level == .v311 && choice.tryingV311)
        #expect(choice.after(.accepted) == .keepsV311)
        #expect(choice.after(.accepted) == nil, "said once")
        #expect(choice.after(.closedUnanswered) == nil, "a broker restart later is a lost connection")
        #expect(choice.level == .v311 && choice.settled && !choice.tryingV311)
    }

    /// The tried 3.1.1 gets one attempt: anything but an acceptance (a close,
    /// a refusal such as a bad password, a malformed answer, a timeout) goes
    /// back to v5, so no sequence of answers leaves the link stuck on a
    /// level the broker never accepted.
    @Test(arguments: [ProtocolChoice.Outcome.closedUnanswered, .refused, .refusedVersion, .failed])
    func aTriedV311NotAcceptedReturnsToV5(outcome: ProtocolChoice.Outcome) {
        var choice = ProtocolChoice()
        #expect(choice.after(.closedUnanswered) == .triesV311AfterClose)
        #expect(choice.after(outcome) == .returnsToV5)
        #expect(choice.level == .v5 && !choice.settled && !choice.tryingV311)
        #expect(choice.after(.closedUnanswered) == .triesV311AfterClose, "each v5 close tries 3.1.1 once")
    }

    @Test func v5AnsweredOnceIsNeverDowngradedByAClose() {
        for answer in [ProtocolChoice.Outcome.accepted, .refused] {
            var choice = ProtocolChoice()
            #expect(choice.after(answer) == nil)
            #expect(choice.after(.closedUnanswered) == nil)
            #expect(choice.level == .v5 && choice.settled)
        }
    }

    @Test func theOutcomeOfAnAttempt() {
        #expect(MQTTLink.outcome(refused: true, refusal: 132, code: 0, savedErrno: 0, libraryError: nil) == .refusedVersion)
        #expect(MQTTLink.outcome(refused: false, refusal: 135, code: 0, savedErrno: 0, libraryError: nil) == .refused)
        #expect(MQTTLink.outcome(refused: false, refusal: 0, code: 7, savedErrno: 0, libraryError: nil) == .closedUnanswered)
        #expect(MQTTLink.outcome(refused: false, refusal: 0, code: 14, savedErrno: 104, libraryError: nil) == .closedUnanswered,
                "ECONNRESET")
        #expect(MQTTLink.outcome(refused: false, refusal: 0, code: 14, savedErrno: 111, libraryError: nil) == .failed,
                "ECONNREFUSED: no connection")
        #expect(MQTTLink.outcome(refused: false, refusal: 0, code: 7, savedErrno: 0, libraryError: "SSL alert") == .failed,
                "a TLS failure is not about the level")
        #expect(MQTTLink.outcome(refused: false, refusal: 0, code: 7, savedErrno: 0, libraryError: nil, bytesSeen: true) == .failed,
                "a close after part of an answer is not a close without one")
    }
}
