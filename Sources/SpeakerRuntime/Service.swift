// SPDX-License-Identifier: Apache-2.0
import SpeakerCore

/// One seam of the speaker (audio, board, MQTT, persistence, systemd): the
/// one place where that outside world meets the core. Every service has the
/// same small lifecycle, run by a ``ServiceGroup``:
///
/// 1. ``start(_:)`` — open its resources, register with the loop; reports
///    what happens outside as actions through the context from then on;
/// 2. carry out the core's effects that belong to it, each kind routed to
///    its service by ``SpeakerServices`` (a `switch` the compiler checks);
/// 3. ``observe(_:)`` — see the state after each dispatch (status lines);
/// 4. ``shutdownBegan()`` then ``stop()`` — graceful notice to every service
///    first, then release everything, in the reverse of start-up.
///
/// Loop thread only.
public protocol SpeakerService: AnyObject {
    /// For logs and tests (`audio`, `board`, `mqtt`, `persistence`, `systemd`).
    var name: String { get }
    /// Opens the seam. A failure names the key or device and its exit code.
    func start(_ context: ServiceContext) throws(StartupError)
    /// The state after a dispatch (its effects performed).
    func observe(_ state: SpeakerState)
    /// Shutdown has begun (before any service stops).
    func shutdownBegan()
    /// Releases everything `start` opened. Called once, only after a successful start.
    func stop()
}

extension SpeakerService {
    public func observe(_ state: SpeakerState) {}
    public func shutdownBegan() {}
}

/// Where a service is in its lifecycle. What `start` opens is one value,
/// held only while running: a service never has some of its parts open and
/// others missing, and a second `stop` finds nothing to release.
enum ServicePhase<Running> {
    /// Built, not started.
    case idle
    /// Started; holds everything `start` opened.
    case running(Running)
    /// Stopped; everything released.
    case stopped
}

/// What a running service may ask of the runtime. Loop thread only.
public protocol ServiceContext: AnyObject {
    /// The loop's clock as a core instant.
    func now() -> MonotonicInstant
    /// Hands an action to the core. Sent while an action is being reduced
    /// (an effect's answer), it runs after that action's effects, in order.
    func send(_ action: SpeakerAction)
    /// A failure while running (chip gone, …): logged, the loop stops, graceful
    /// shutdown follows and the process exits with `exitCode`.
    func fail(_ message: String, exitCode: Int32)
    /// Stops the loop for a graceful shutdown with exit code 0 (SIGTERM, `q` in the demo).
    func requestStop(_ reason: String)
    /// The state as of the last dispatch.
    var state: SpeakerState { get }
}

/// A start-up failure with the exit code it maps to (1 configuration, 2 runtime).
public struct StartupError: Error, Equatable {
    public var exitCode: Int32
    public var message: String

    public init(exitCode: Int32, message: String) {
        self.exitCode = exitCode
        self.message = message
    }
}
