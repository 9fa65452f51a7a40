// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
import SpeakerLoop

/// The running speaker: the core, the loop it runs on, and the services that
/// connect it to the world. The one path of every action:
/// a service (or the deadline timer) calls ``send(_:)`` → `reduce` → each
/// effect, in the order the core emitted them, to the service whose seam it
/// is (``SpeakerServices/perform(_:logger:)``) →
/// actions the effects answered with, in order → the deadline timer is
/// re-armed → every service observes the new state.
///
/// Built by `main` (live loop and services) or by a test (``ManualEventLoop``
/// and services with in-memory ports). Loop thread only.
public final class SpeakerRuntime: ServiceContext {
    private let loop: any EventLoopProtocol
    private let logger: Logger
    private var core: Speaker
    public let group: ServiceGroup
    private let services: SpeakerServices
    /// Actions waiting for the core: effects' answers, queued while reducing.
    private var queue: [SpeakerAction] = []
    private var dispatching = false
    /// The one timer for the core's next deadline.
    private let deadline: DeadlineTimer
    /// 0, or the exit code of a failure while running.
    public private(set) var exitCode: Int32 = 0
    /// Actions reduced so far (ARCHITECTURE.md counts the passes of a press and a command).
    public private(set) var reductions = 0

    public init(core: Speaker, loop: any EventLoopProtocol, services: SpeakerServices, logger: Logger) {
        self.core = core
        self.loop = loop
        self.logger = logger
        self.services = services
        group = ServiceGroup(services.startOrder, logger: logger.named("services"))
        deadline = DeadlineTimer(loop: loop)
    }

    public var state: SpeakerState { core.state }

    public func now() -> MonotonicInstant { MonotonicInstant(nanoseconds: loop.now()) }

    /// Starts the services in order, then gives the core `.start`.
    public func start() throws(StartupError) {
        try group.start(self)
        send(.start(at: now()))
    }

    /// Graceful shutdown, start-up reversed: the core stops applying new
    /// commands (`.stopping`: they are kept in the command journal for the
    /// next process), every service is told (the MQTT service publishes what
    /// is owed and journals what still arrives), then the core writes what is
    /// unsaved (`.shutdown`, while every seam still runs), then the services
    /// stop in reverse order. Returns the exit code.
    public func stop() -> Int32 {
        let started = loop.now()
        send(.stopping(at: now()))
        group.beginShutdown()
        send(.shutdown(at: now()))
        deadline.cancel()
        group.stop()
        logger.info("stopped in \((loop.now() - started) / 1_000_000) ms")
        return exitCode
    }

    public func send(_ action: SpeakerAction) {
        queue.append(action)
        guard !dispatching else { return }
        dispatching = true
        while !queue.isEmpty {
            let current = queue.removeFirst()
            reductions += 1
            for effect in core.reduce(current) { perform(effect) }
        }
        dispatching = false
        deadline.arm(at: Self.nextDeadline(of: &core)) { [unowned self] in self.send(.tick(self.now())) }
        group.observe(core.state)
    }

    /// The core's next deadline, read in place: the getter called on the
    /// stored `core` would copy the whole `Speaker` (and release it) on every
    /// dispatch.
    private static func nextDeadline(of core: inout Speaker) -> MonotonicInstant? { core.nextDeadline }

    /// One effect to its seam; only while every service runs (the core
    /// emits effects from `.start` on, after the last service started).
    private func perform(_ effect: SpeakerEffect) {
        if group.allRunning {
            services.perform(effect, logger: logger)
        } else if case let .log(level, message) = effect {
            logger.log(level.systemLevel, message)
        } else {
            logger.error("no service performs \(effect): not every service is running")
        }
    }

    public func fail(_ message: String, exitCode: Int32) {
        logger.error(message)
        self.exitCode = exitCode
        loop.stop()
    }

    public func requestStop(_ reason: String) {
        logger.notice(reason)
        loop.stop()
    }
}

/// One loop timer, re-armed to a new instant (or none) after every dispatch.
final class DeadlineTimer {
    private let loop: any EventLoopProtocol
    private var armed: [LoopTimerID] = []

    init(loop: any EventLoopProtocol) { self.loop = loop }

    func arm(at instant: MonotonicInstant?, _ fire: @escaping () -> Void) {
        cancel()
        guard let instant else { return }
        armed = [loop.schedule(at: instant.nanoseconds) { [unowned self] in
            self.armed = []
            fire()
        }]
    }

    func cancel() {
        for timer in armed { loop.cancel(timer) }
        armed = []
    }
}

extension CoreLogLevel {
    var systemLevel: LogLevel {
        switch self {
        case .error: return .error
        case .warning: return .warning
        case .notice: return .notice
        case .info: return .info
        case .debug: return .debug
        }
    }
}
