// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
import SpeakerProtocol
import Synchronization

/// Drives a `Speaker` with a manual clock and a fixed environment, and reads
/// its effects: the core's test double for the whole world.
struct Harness {
    var speaker: Speaker
    var now = MonotonicInstant.milliseconds(1_000)

    /// Every random draw is the range's lower bound plus this (deterministic jitter).
    static let randomOffset = 250

    static let catalog = [
        CatalogEntry(id: "white", name: "White noise", summary: "flat"),
        CatalogEntry(id: "pink", name: "Pink noise", summary: "soft"),
        CatalogEntry(id: "brown", name: "Brown noise", summary: "deep"),
    ]

    init(catalog: [CatalogEntry] = Harness.catalog, revisionReservation: UInt64 = 0, restored: PersistedState? = nil,
         savedMixes: SavedMixes? = nil, artwork: [ArtworkFile] = [], configure: (inout SpeakerConfig) -> Void = { _ in }) {
        var config = SpeakerConfig.defaults(hostname: "kitchen")
        config.inputs.encoder.acceleration = false
        configure(&config)
        let counter = Counter()
        let env = SpeakerEnvironment(
            wallClock: { WallClockReading(seconds: 1_795_953_600, milliseconds: 123) },
            clockSynced: { true },
            newSessionID: { "session-\(counter.next())" },
            software: "ambient-speaker test",
            randomInt: { range in min(range.lowerBound + Harness.randomOffset, range.upperBound) })
        speaker = Speaker(config: config, catalog: catalog, environment: env, revisionReservation: revisionReservation, epoch: "e1",
                          restored: restored, savedMixes: savedMixes, artwork: artwork)
    }

    /// What the simulated disk answers to `reserveRevisions`: nil writes
    /// succeed, else this failure reason (a full or read-only state directory).
    var reservationFailure: String?
    /// Every reservation asked for, in order.
    var reservations: [UInt64] = []
    /// What the simulated ALSA mixer answers to `setMixerLevel`: nil takes
    /// the level, else the failure and the level read back afterwards.
    var mixerFailure: (reason: String, actual: Double?)?

    var state: SpeakerState { speaker.state }

    /// Reduces `action` and, as the runtime does, answers each
    /// `reserveRevisions` with `.revisionReservation` and each
    /// `setMixerLevel` with `levelSet`/`levelFailed` right after it;
    /// returns all effects in order.
    @discardableResult
    mutating func send(_ action: SpeakerAction) -> [SpeakerEffect] {
        var out: [SpeakerEffect] = []
        var queue = [action]
        while !queue.isEmpty {
            let effects = speaker.reduce(queue.removeFirst())
            out += effects
            for effect in effects {
                switch effect {
                case .reserveRevisions(let through):
                    reservations.append(through)
                    queue.append(.revisionReservation(through: through, failure: reservationFailure, at: now))
                case .audio(.setMixerLevel(_, let ticket)):
                    if let failure = mixerFailure {
                        queue.append(.engine(.levelFailed(ticket: ticket, reason: failure.reason, actual: failure.actual), at: now))
                    } else {
                        queue.append(.engine(.levelSet(ticket: ticket), at: now))
                    }
                default:
                    break
                }
            }
        }
        return out
    }

    @discardableResult
    mutating func advance(ms: Int) -> [SpeakerEffect] {
        now = now.advanced(byMilliseconds: ms)
        return send(.tick(now))
    }

    @discardableResult
    mutating func command(_ json: String, responseTopic: String? = nil, correlation: [UInt8]? = nil) -> [SpeakerEffect] {
        send(.command(IncomingCommand(payload: Array(json.utf8), responseTopic: responseTopic, correlationData: correlation), at: now))
    }

    @discardableResult
    mutating func edge(_ line: InputLine, _ active: Bool, afterMs: Int = 0) -> [SpeakerEffect] {
        now = now.advanced(byMilliseconds: afterMs)
        return send(.lineEdge(LineEdge(line: line, isActive: active, at: now)))
    }

    /// Acknowledges every transport request in `effects` as the engine would
    /// (a long fade of 0 ms at once; a longer one only when a test reports it).
    @discardableResult
    mutating func engineDoes(_ effects: [SpeakerEffect]) -> [SpeakerEffect] {
        var out: [SpeakerEffect] = []
        for case .audio(let request) in effects {
            switch request {
            case .play(_, _, let t), .switchTo(_, _, let t), .resume(_, let t): out += send(.engine(.playing(ticket: t), at: now))
            case .pause(_, let t): out += send(.engine(.paused(ticket: t), at: now))
            case .longFade(_, 0, let t): out += send(.engine(.longFadeDone(ticket: t), at: now))
            case .setLevel, .setMixerLevel, .mixes, .setLayerLevel, .longFade, .setMuted: break  // a long fade ends when a test says so
            }
        }
        return out
    }

    /// A command, then the engine doing what it asked.
    @discardableResult
    mutating func commandDone(_ json: String) -> [SpeakerEffect] {
        let first = command(json)
        return first + engineDoes(first)
    }
}

final class Counter: Sendable {
    private let value = Atomic<Int>(0)
    func next() -> Int { value.add(1, ordering: .relaxed).newValue }
}

extension [SpeakerEffect] {
    var publications: [Publication] { compactMap { if case .publish(let p) = $0 { return p } else { return nil } } }
    func published(_ suffix: String) -> [JSONValue] {
        publications.filter { $0.topic == "ambient-speaker/kitchen/\(suffix)" }.compactMap { try? JSONParser().parse($0.payload) }
    }
    func lastPublished(_ suffix: String) -> JSONValue? { published(suffix).last }
    var audioRequests: [AudioRequest] { compactMap { if case .audio(let r) = $0 { return r } else { return nil } } }
    /// The levels of the mixer writes asked for (alsa-mixer mode), tickets left out.
    var mixerLevels: [Double] { audioRequests.compactMap { if case .setMixerLevel(let l, _) = $0 { return l } else { return nil } } }
    var topics: [String] { publications.map(\.topic) }
}
