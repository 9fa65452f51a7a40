// SPDX-License-Identifier: Apache-2.0
import Testing
import SpeakerCore
import SpeakerProtocol
import SpeakerSystem
import SpeakerRuntime

/// The group's lifecycle with recording services: start in order, shutdown
/// notice to all, stop in reverse; a failed start stops the started ones in
/// reverse. (Effects are routed by `SpeakerServices`, not by the group.)
@Suite struct ServiceGroupTests {
    final class Recorder: SpeakerService {
        let name: String
        let trace: Trace
        let failStart: Bool
        init(_ name: String, _ trace: Trace, failStart: Bool = false) {
            self.name = name
            self.trace = trace
            self.failStart = failStart
        }
        func start(_ context: ServiceContext) throws(StartupError) {
            trace.add("start \(name)")
            if failStart { throw StartupError(exitCode: 2, message: "\(name) failed") }
        }
        func shutdownBegan() { trace.add("shutdown \(name)") }
        func stop() { trace.add("stop \(name)") }
    }

    /// A context no service here calls.
    final class NoContext: ServiceContext {
        func now() -> MonotonicInstant { .milliseconds(0) }
        func send(_ action: SpeakerAction) {}
        func fail(_ message: String, exitCode: Int32) {}
        func requestStop(_ reason: String) {}
        let state = SpeakerState(config: .defaults(hostname: "t"), catalog: [CatalogEntry(id: "a", name: "A", summary: "")],
                                 volume: .relative, revision: RevisionCounter(persistedReservation: 0, epoch: "e1"),
                                 inputs: InputDecoders(config: SpeakerConfig.defaults(hostname: "t").inputs))
    }

    private let logger = Logger(component: "t", threshold: .debug, backend: MemoryLogBackend())

    @Test func startsInOrderAndStopsInReverse() throws {
        let trace = Trace()
        let group = ServiceGroup([Recorder("a", trace), Recorder("b", trace), Recorder("c", trace)], logger: logger)
        try group.start(NoContext())
        #expect(group.runningNames == ["a", "b", "c"])
        #expect(group.allRunning)
        group.stop()
        #expect(trace.lines == ["start a", "start b", "start c",
                                "shutdown c", "shutdown b", "shutdown a", "stop c", "stop b", "stop a"])
        #expect(group.runningNames.isEmpty)
    }

    @Test func aFailedStartStopsOnlyTheStartedOnesInReverse() {
        let trace = Trace()
        let group = ServiceGroup([Recorder("a", trace), Recorder("b", trace), Recorder("c", trace, failStart: true),
                                  Recorder("d", trace)], logger: logger)
        #expect(throws: StartupError(exitCode: 2, message: "c failed")) { try group.start(NoContext()) }
        #expect(trace.lines == ["start a", "start b", "start c", "shutdown b", "shutdown a", "stop b", "stop a"])
        #expect(!group.allRunning, "nothing runs")
    }
}
