// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// The watcher's way to the broker: what `FleetWatcher` needs of an MQTT
/// client besides the messages it is handed. The project's MQTT adapter
/// implements it (`MQTTLink`); `RecordingWatchLink` is the in-memory twin.
public protocol WatchBrokerLink: AnyObject {
    /// Publishes at QoS 1, not retained. False when the message could not be
    /// handed to the client (not connected).
    func publishCommand(topic: String, payload: [UInt8]) -> Bool
}

/// Runs a `Fleet` against a broker link: messages in, lifecycle events and
/// problems out through the closures given at `init`, commands out through
/// the link with their completions called back. No clock and no thread of
/// its own: the caller passes `now` (monotonic milliseconds) and calls
/// `tick` by `nextDeadline`. One thread (the caller's loop).
public final class FleetWatcher {
    public private(set) var fleet: Fleet
    private let link: any WatchBrokerLink
    private let onEvent: (LifecycleEvent) -> Void
    private let onProblem: (String) -> Void
    private var completions: [String: (Result<CommandSuccess, CommandFailure>) -> Void] = [:]

    /// - Parameters:
    ///   - onEvent: each lifecycle event, once, in order.
    ///   - onProblem: each message that breaks the contract, in words (topic first).
    public init(prefix: String, link: any WatchBrokerLink, onEvent: @escaping (LifecycleEvent) -> Void,
                onProblem: @escaping (String) -> Void = { _ in }) {
        fleet = Fleet(prefix: prefix)
        self.link = link
        self.onEvent = onEvent
        self.onProblem = onProblem
    }

    /// When `tick` next has work (a command's timeout).
    public var nextDeadline: UInt64? { fleet.nextDeadline }

    /// Hands one message from the broker to the fleet.
    public func receive(_ message: WatchMessage, now: UInt64) {
        perform(fleet.receive(message, now: now))
    }

    /// Times out what is due.
    public func tick(now: UInt64) {
        perform(fleet.tick(now: now))
    }

    /// Sends `command` with `id` to `deviceID` and calls `completion` once:
    /// with the good result and the session whose revision it names, or
    /// with why not (a refusal's code, a timeout after `timeoutMs`, …).
    public func send(_ command: Command, id: String, to deviceID: String, now: UInt64, timeoutMs: UInt64,
                     completion: @escaping (Result<CommandSuccess, CommandFailure>) -> Void) {
        switch fleet.send(CommandEnvelope(id: id, command: command), to: deviceID, now: now, timeoutMs: timeoutMs) {
        case .failure(let failure):
            completion(.failure(failure))
        case .success(let message):
            completions[id] = completion
            if !link.publishCommand(topic: message.topic, payload: message.payload),
               let abandoned = fleet.abandon(commandID: id, deviceID: deviceID) {
                perform([.completed(abandoned)])
            }
        }
    }

    private func perform(_ outputs: [FleetOutput]) {
        for output in outputs {
            switch output {
            case .lifecycle(let event): onEvent(event)
            case .problem(let text): onProblem(text)
            case .dropped: break
            case .completed(let done): completions.removeValue(forKey: done.id)?(done.outcome)
            }
        }
    }
}

/// The in-memory `WatchBrokerLink`: records what would be published, and
/// can play a link that is not connected. One thread.
public final class RecordingWatchLink: WatchBrokerLink {
    public private(set) var published: [WatchMessage] = []
    public var connected = true

    public init() {}

    public func publishCommand(topic: String, payload: [UInt8]) -> Bool {
        guard connected else { return false }
        published.append(WatchMessage(topic: topic, payload: payload))
        return true
    }
}
