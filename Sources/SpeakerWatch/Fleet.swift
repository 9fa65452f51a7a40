// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// A message from the broker, as a watcher receives it.
public struct WatchMessage: Equatable, Sendable {
    public var topic: String
    public var payload: [UInt8]
    /// Delivered from the broker's retained store (at subscribe), not live.
    public var retained: Bool

    public init(topic: String, payload: [UInt8], retained: Bool = false) {
        self.topic = topic
        self.payload = payload
        self.retained = retained
    }
}

/// What the fleet makes of a message, a command or the passing of time.
public enum FleetOutput: Equatable, Sendable {
    /// A session started, changed or ended (exactly once per change).
    case lifecycle(LifecycleEvent)
    /// A `session` not applied (not newer in its epoch, or of a left epoch).
    case dropped(deviceID: String, StaleSession)
    /// A message that breaks the contract, with where and what.
    case problem(String)
    /// A command sent with `send` is done: it succeeded or failed.
    case completed(CommandCompletion)
}

/// A fleet of speakers under one topic prefix, followed by the contract's
/// rules, turned into session lifecycle events, with commands that wait for
/// their result and for the session it names.
///
/// The reducer of the reading side: `receive`, `send` and `tick` take the
/// time (`now`, milliseconds on any monotonic clock; a manual one in tests)
/// and return what happened as values; `FleetWatcher` performs them. Pure
/// value; no I/O, no clock of its own; one thread at a time.
public struct Fleet: Sendable {
    public let prefix: String
    public private(set) var speakers: [String: FollowedSpeaker] = [:]
    var commands = CommandLedger()

    public init(prefix: String) { self.prefix = prefix }

    /// The earliest instant at which `tick` has a command to time out.
    public var nextDeadline: UInt64? { commands.nextDeadline }

    /// Takes one message; returns its lifecycle events, drops, problems and
    /// the commands it completes, in order.
    public mutating func receive(_ message: WatchMessage, now: UInt64) -> [FleetOutput] {
        guard let topic = FleetTopic(message.topic, prefix: prefix) else { return [] }
        let id = topic.deviceID
        var speaker = speakers[id] ?? FollowedSpeaker(deviceID: id)
        defer { speakers[id] = speaker }
        if topic.leaf == .availability {
            let text = String(decoding: message.payload, as: UTF8.self)
            guard text == "online" || text == "offline" else {
                return message.payload.isEmpty ? [] : [.problem("\(message.topic): expected online or offline, got \(Self.quoted(text))")]
            }
            speaker.take(online: text == "online")
            return []
        }
        guard !message.payload.isEmpty else { return [] }  // a retained topic cleared
        let json: JSONValue
        do throws(JSONParseError) {
            json = try JSONParser().parse(message.payload)
        } catch {
            return [.problem("\(message.topic): not JSON: \(error)")]
        }
        do {
            switch topic.leaf {
            case .session:
                let session = try SessionAttributes(json: json)
                switch speaker.apply(session: session, json: json) {
                case .success(let events):
                    return events.map(FleetOutput.lifecycle) + commands.sessionApplied(speaker, now: now).map(FleetOutput.completed)
                case .failure(let stale):
                    return [.dropped(deviceID: id, stale)]
                }
            case .device:
                _ = speaker.take(device: try DeviceDescriptor(json: json))
            case .catalog:
                speaker.take(catalog: try [CatalogEntry](json: json))
            case .result:
                return commands.resultArrived(try CommandResult(json: json), from: speaker, now: now).map(FleetOutput.completed)
            case .availability:
                break
            }
        } catch {
            return [.problem("\(message.topic): \(Self.describe(error))")]
        }
        return []
    }

    /// Registers a command for `deviceID` and returns the message to
    /// publish (QoS 1, not retained); it completes with its result and the
    /// session whose revision that names, or fails after `timeoutMs`.
    public mutating func send(_ command: CommandEnvelope, to deviceID: String, now: UInt64,
                              timeoutMs: UInt64) -> Result<WatchMessage, CommandFailure> {
        guard FleetTopic.isDeviceID(deviceID) else { return .failure(.invalidDevice(deviceID)) }
        guard commands.register(id: command.id, deviceID: deviceID, deadline: now + timeoutMs) else {
            return .failure(.duplicateID(command.id))
        }
        return .success(WatchMessage(topic: "\(prefix)/\(deviceID)/command", payload: command.json.serialized()))
    }

    /// Forgets a command whose message could not be published (it fails with `notSent`).
    public mutating func abandon(commandID: String, deviceID: String) -> CommandCompletion? {
        commands.abandon(id: commandID, deviceID: deviceID)
    }

    /// Fails the commands whose time is up.
    public mutating func tick(now: UInt64) -> [FleetOutput] {
        commands.expire(now: now).map(FleetOutput.completed)
    }

    /// A decoding error in words, with the key path where it happened.
    static func describe(_ error: any Error) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            keys.reduce(into: "") { text, key in
                if let index = key.intValue { text += "[\(index)]" } else { text += (text.isEmpty ? "" : ".") + key.stringValue }
            }
        }
        switch error as? DecodingError {
        case .keyNotFound(let key, let context)?:
            return "\(path(context.codingPath + [key])): missing"
        case .typeMismatch(_, let context)?, .valueNotFound(_, let context)?, .dataCorrupted(let context)?:
            return "\(path(context.codingPath)): \(context.debugDescription)"
        default:
            return "\(error)"
        }
    }

    static func quoted(_ text: String) -> String {
        let clipped = text.utf8.count > 40 ? String(decoding: text.utf8.prefix(40), as: UTF8.self) + "…" : text
        return "\"\(clipped)\""
    }
}
