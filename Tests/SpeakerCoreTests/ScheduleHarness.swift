// SPDX-License-Identifier: Apache-2.0
import Foundation
import SpeakerCore
import SpeakerProtocol
import Synchronization

/// A wall clock a test sets and steps, with the kernel's sync flag: the
/// world the schedule reads through `SpeakerEnvironment`.
final class TestWallClock: Sendable {
    private let state: Mutex<(ms: Int64, synced: Bool)>

    init(seconds: Int64, synced: Bool = true) { state = Mutex((seconds * 1000, synced)) }

    var reading: WallClockReading {
        let ms: Int64 = state.withLock { $0.ms }
        let seconds: Int64 = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
        let remainder: Int64 = ms - seconds * 1000
        return WallClockReading(seconds: seconds, milliseconds: Int(remainder))
    }
    var synced: Bool {
        get { state.withLock { $0.synced } }
        set { state.withLock { $0.synced = newValue } }
    }
    var seconds: Int64 { reading.seconds }

    /// Moves the clock as time passes (`ms` may be negative for a step back).
    func advance(ms: Int64) { state.withLock { $0.ms += ms } }
    /// Sets the clock (a step).
    func set(seconds: Int64) { state.withLock { $0.ms = seconds * 1000 } }
}

/// A real zone from the system's tzdata.
func zone(_ name: String) -> TimeZoneRules {
    let bytes = FileManager.default.contents(atPath: "/usr/share/zoneinfo/" + name).map { Array($0) } ?? []
    return (try? TimeZoneRules(name: name, tzif: bytes)) ?? .utc
}

/// Unix seconds of a local wall time in `zone` (resolved as the schedule does).
func instant(_ zone: TimeZoneRules, _ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int) -> Int64 {
    zone.utc(fromLocal: utcSeconds(year, month, day, hour, minute))
}

/// Unix seconds of a UTC date and time.
func utcSeconds(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int) -> Int64 {
    var c = DateComponents()
    (c.year, c.month, c.day, c.hour, c.minute) = (year, month, day, hour, minute)
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    return Int64(calendar.date(from: c)!.timeIntervalSince1970)
}

/// A harness whose speaker reads `clock`, in `zoneName`, with `rules`.
struct ScheduleHarness {
    var h: Harness
    let clock: TestWallClock

    init(clock: TestWallClock, zoneName: String = "Europe/Berlin", rules: String = "[]", restored: PersistedState? = nil,
         configure: (inout SpeakerConfig) -> Void = { _ in }) {
        self.clock = clock
        var config = SpeakerConfig.defaults(hostname: "kitchen")
        config.inputs.encoder.acceleration = false
        if let value = try? JSONParser().parse(Array(rules.utf8)),
           let parsed = try? ScheduleRule.parseList(value, path: "schedules", relativeVolume: false) {
            config.schedules = parsed
        }
        config.clock.zone = zone(zoneName)
        configure(&config)
        let counter = Counter()
        let env = SpeakerEnvironment(wallClock: { clock.reading }, clockSynced: { clock.synced },
                                     newSessionID: { "session-\(counter.next())" }, software: "test")
        h = Harness()
        h.speaker = Speaker(config: config, catalog: Harness.catalog, environment: env, revisionReservation: 0, epoch: "e1", restored: restored)
    }

    var state: SpeakerState { h.state }

    /// Lets `seconds` of time pass on both clocks, delivering every deadline
    /// tick on the way and answering the engine's transport requests.
    @discardableResult
    mutating func pass(seconds: Int64) -> [SpeakerEffect] {
        let end = h.now.advanced(byMilliseconds: Int(seconds * 1000))
        var out: [SpeakerEffect] = []
        while let due = h.speaker.nextDeadline, due <= end {
            let step = Int64(due.nanoseconds(since: h.now) / 1_000_000)
            clock.advance(ms: step)
            h.now = due
            let fx = h.send(.tick(due))
            out += fx + h.engineDoes(fx)
        }
        clock.advance(ms: Int64(end.nanoseconds(since: h.now) / 1_000_000))
        h.now = end
        return out
    }

    @discardableResult
    mutating func start() -> [SpeakerEffect] {
        let fx = h.send(.start(at: h.now))
        return fx + h.engineDoes(fx)
    }

    /// The wall clock is set to `seconds` (and the runtime reports the step).
    @discardableResult
    mutating func step(to seconds: Int64, synced: Bool = true) -> [SpeakerEffect] {
        clock.set(seconds: seconds)
        clock.synced = synced
        let fx = h.send(.clockStepped(at: h.now))
        return fx + h.engineDoes(fx)
    }
}

extension ScheduleHarness {
    /// The kernel's sync flag becomes `synced` with no step (NTP slewed the
    /// clock into sync), and the runtime's watch reports it.
    @discardableResult
    mutating func syncChanges(to synced: Bool) -> [SpeakerEffect] {
        clock.synced = synced
        let fx = h.send(.clockSyncChanged(at: h.now))
        return fx + h.engineDoes(fx)
    }
}

extension [SpeakerEffect] {
    /// The schedule rules that fired, by index, from the core's log lines.
    var firedRules: [Int] {
        compactMap {
            guard case .log(_, let line) = $0, line.hasPrefix("schedule rule "), line.hasSuffix(" fires") else { return nil }
            return Int(line.dropFirst("schedule rule ".count).prefix { $0 != " " })
        }
    }
    /// The levels asked of the software gain.
    var levels: [Double] { audioRequests.compactMap { if case .setLevel(let l) = $0 { return l } else { return nil } } }
}
