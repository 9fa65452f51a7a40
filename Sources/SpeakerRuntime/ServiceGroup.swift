// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
import SpeakerLoop

/// The services of the speaker in dependency order (as swift-service-lifecycle's
/// `ServiceGroup`, without the dependency): ``start(_:)`` starts them in
/// order; if one fails, the ones already started are stopped in reverse and
/// the failure is rethrown. ``stop()`` tells every running service that
/// shutdown began, then stops them in reverse order. Loop thread only.
public final class ServiceGroup {
    public let services: [any SpeakerService]
    private let logger: Logger
    /// How many of `services` (a prefix) are running.
    private var running = 0

    public init(_ services: [any SpeakerService], logger: Logger) {
        self.services = services
        self.logger = logger
    }

    /// The names of the running services, in start order.
    public var runningNames: [String] { services.prefix(running).map(\.name) }

    public func start(_ context: ServiceContext) throws(StartupError) {
        for service in services {
            do {
                try service.start(context)
                running += 1
            } catch {
                logger.debug("\(service.name) failed to start; stopping the \(running) started before it")
                stop()
                throw error
            }
        }
    }

    /// Whether every service has started (and none has stopped).
    public var allRunning: Bool { running == services.count }

    public func observe(_ state: SpeakerState) {
        for service in services.prefix(running) { service.observe(state) }
    }

    /// Whether the running services have had their shutdown notice.
    private var noticeGiven = false

    /// Shutdown notice to all running services, in reverse start order, once:
    /// each may still work with every other (the MQTT service answers what
    /// arrives until its `offline` is acknowledged).
    public func beginShutdown() {
        guard !noticeGiven else { return }
        noticeGiven = true
        for service in services.prefix(running).reversed() { service.shutdownBegan() }
    }

    /// Shutdown notice to all running services (unless ``beginShutdown()``
    /// gave it), then `stop()` in reverse start order.
    public func stop() {
        beginShutdown()
        let started = services.prefix(running)
        for service in started.reversed() {
            service.stop()
            running -= 1
        }
    }
}
