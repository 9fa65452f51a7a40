// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
import SpeakerProtocol
import Synchronization

/// libFuzzer entry point: one arbitrary `command` payload, optionally
/// followed by a script that moves time around it (`TimeScript`).
///
/// The input is the payload, then optionally `TimeScript.marker` and the
/// script. Without the marker the payload arrives alone just after start-up,
/// so a plain JSON seed means what it always meant.
///
/// Checks, besides "never traps": a decoded command re-encodes to JSON that
/// decodes to the same command; a result always serialises to JSON the
/// strict parser reads back; over the whole run the core answers the
/// command with at most one `command/result` (exactly one when it is
/// rejected), and an acceptance names a revision a `session` carries. For
/// time (`FuzzRun`): every `session` revision is above the one before; no
/// schedule occurrence fires before the wall clock reaches it, nor twice
/// unless a step back of more than a day and a half restarted the schedule;
/// a tick at a deadline moves the deadline on.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCommand(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let (bytes, script) = TimeScript.split(input)
    let decoded = CommandDecoder().decode(bytes)
    let result: CommandResult
    switch decoded {
    case .success(let envelope):
        let again = CommandDecoder().decode(envelope.json.serialized())
        precondition(again == .success(envelope), "re-encoded command decodes differently: \(envelope.json.jsonText)")
        result = .accepted(id: envelope.id, revision: 1, level: nil)
    case .failure(let rejection):
        result = .rejected(rejection)
    }
    let text = result.json.serialized()
    precondition((try? JSONParser().parse(text)) != nil, "unparseable result: \(result.json.jsonText)")

    var run = FuzzRun()
    run.send(.start(at: run.now))
    run.send(.revisionReservation(through: 1000, failure: nil, at: run.now))  // as the runtime answers
    var delivered = false
    for op in script.ops {
        if case .command = op {
            if !delivered { run.deliver(bytes) }
            delivered = true
        } else {
            run.perform(op)
        }
    }
    if !delivered { run.deliver(bytes) }
    run.pass(ms: 0)  // anything due at the end (a fade the engine finished)
    precondition(run.results <= 1, "more than one result for one command")
    if case .failure = decoded { precondition(run.results == 1, "a rejected command got no result") }
    if let revision = run.acceptedRevision {
        precondition(run.published.contains(revision), "accepted at revision \(revision), which no session carried")
    }
    return 0
}

/// The time script after the payload: pairs of bytes (operation, argument),
/// an odd last byte ignored. Every operation first lets 1 ms pass.
struct TimeScript {
    /// Separates the payload from the script: a NUL cannot appear in a JSON
    /// command, so a valid command never contains it.
    static let marker: [UInt8] = [0] + Array("time".utf8) + [0]

    enum Op: Equatable {
        /// The wall clock steps by this many seconds (either way), reported with `.clockStepped`.
        case step(seconds: Int64)
        /// The wall clock steps forward to the next time its UTC time of day
        /// reads this many seconds (a multiple of 6 minutes), reported with `.clockStepped`.
        case forwardTo(secondOfDay: Int64)
        /// Both clocks run on by this many milliseconds, with every deadline's tick on the way.
        case pass(ms: Int64)
        /// The kernel's sync flag changes; `stepped`: reported with `.clockStepped` as NTP's step is.
        case sync(Bool, stepped: Bool)
        /// The wall clock slews by this many milliseconds, with no event.
        case slew(ms: Int64)
        /// The output device vanishes (false) or comes back (true).
        case audio(available: Bool)
        /// The payload arrives now (once; without this it arrives after the script).
        case command
    }

    var ops: [Op] = []

    /// The payload and the script of `input` (an empty script without the marker).
    static func split(_ input: [UInt8]) -> (payload: [UInt8], script: TimeScript) {
        guard let at = firstIndex(of: marker, in: input) else { return (input, TimeScript()) }
        return (Array(input[..<at]), TimeScript(Array(input[(at + marker.count)...])))
    }

    private static func firstIndex(of needle: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        return (0...(bytes.count - needle.count)).first { start in
            bytes[start] == needle[0] && Array(bytes[start..<(start + needle.count)]) == needle
        }
    }

    init() {}

    /// Operation `op & 7`: 0/1 step forward/back, 2 pass, 3 sync (argument
    /// bit 0: synced, bit 1: stepped), 4 the command, 5 audio (bit 0:
    /// available), 6 slew (argument as Int8 × 100 ms), 7 forward to a time of
    /// day. A step or pass counts the argument's low six bits in units its
    /// top two bits choose: seconds, minutes, hours, days for a step;
    /// seconds, minutes, quarter hours, hours for a pass.
    init(_ bytes: [UInt8]) {
        var index = 0
        while index + 1 < bytes.count {
            let (op, arg) = (bytes[index], bytes[index + 1])
            index += 2
            let n = Int64(arg & 0x3F)
            let stepUnit: [Int64] = [1, 60, 3600, 86_400]
            let passUnitMs: [Int64] = [1000, 60_000, 900_000, 3_600_000]
            switch op & 7 {
            case 0: ops.append(.step(seconds: n * stepUnit[Int(arg >> 6)]))
            case 1: ops.append(.step(seconds: -n * stepUnit[Int(arg >> 6)]))
            case 2: ops.append(.pass(ms: n * passUnitMs[Int(arg >> 6)]))
            case 3: ops.append(.sync(arg & 1 != 0, stepped: arg & 2 != 0))
            case 4: ops.append(.command)
            case 5: ops.append(.audio(available: arg & 1 != 0))
            case 6: ops.append(.slew(ms: Int64(Int8(bitPattern: arg)) * 100))
            default: ops.append(.forwardTo(secondOfDay: Int64(arg % 240) * 360))
            }
        }
    }
}

/// The wall clock and sync flag the fuzz speaker reads through its
/// environment; the run sets them.
final class FuzzWallClock: Sendable {
    private let state = Mutex<(ms: Int64, synced: Bool)>((1_800_000_000_000, true))

    /// Between 2000 and 2100: a real clock is never far outside, and the
    /// speaker's calendar need not handle one that is.
    static let range: ClosedRange<Int64> = 946_684_800_000...4_102_444_800_000

    var ms: Int64 {
        get { state.withLock { $0.ms } }
        set { state.withLock { $0.ms = min(max(newValue, Self.range.lowerBound), Self.range.upperBound) } }
    }
    var synced: Bool {
        get { state.withLock { $0.synced } }
        set { state.withLock { $0.synced = newValue } }
    }
    var reading: WallClockReading {
        let ms = self.ms
        return WallClockReading(seconds: ms / 1000, milliseconds: Int(ms % 1000))
    }
}

/// One run of the fuzz speaker: the world around it (both clocks, the
/// engine answering its requests, the disk answering reservations) and the
/// invariants checked on everything it emits.
struct FuzzRun {
    let clock = FuzzWallClock()
    var speaker: Speaker
    var now = MonotonicInstant.milliseconds(1)
    /// `command/result` publications seen.
    var results = 0
    var lastRevision: UInt64?
    /// Every `session` revision published, and the one an acceptance named.
    var published = Set<UInt64>()
    var acceptedRevision: UInt64?
    /// Occurrences fired (rule index, Unix seconds) since the schedule last started afresh.
    var fired = Set<[Int64]>()
    /// The latest wall clock (seconds) since the schedule last started afresh.
    var latestWall: Int64
    /// The long fade the engine is running: its ticket and when it ends (an overtaken one is not answered).
    var fade: (ticket: UInt64, due: MonotonicInstant)?
    var audioAvailable = true
    /// Ticks delivered, so that a long script cannot run into libFuzzer's timeout.
    var ticks = 0
    static let tickBudget = 1000

    /// A step back of more than this lets the schedule start afresh
    /// (`ScheduleClock.resetBackwardSeconds`): occurrences may fire again.
    static let resetBackwardSeconds: Int64 = 36 * 3600

    init() {
        latestWall = clock.reading.seconds
        let clock = self.clock
        let env = SpeakerEnvironment(wallClock: { clock.reading }, clockSynced: { clock.synced },
                                     newSessionID: { "fuzz-session" }, software: "fuzz", randomInt: { $0.lowerBound })
        speaker = Speaker(config: Self.config(),
                          catalog: [CatalogEntry(id: "rain", name: "Rain", summary: ""),
                                    CatalogEntry(id: "pink", name: "Pink", summary: "")],
                          environment: env, revisionReservation: 0, epoch: "e1")
    }

    /// The defaults, plus rules and a night cap in a zone with daylight
    /// saving time, so that steps and passing time have something to fire:
    /// a weekday wake-up, a play at 02:30 (in the hour skipped or repeated
    /// when the clocks change) and a nightly stop.
    static func config() -> SpeakerConfig {
        var config = SpeakerConfig.defaults(hostname: "fuzz")
        config.schedules = [
            ScheduleRule(minuteOfDay: 7 * 60, days: 0x1F, action: .play, soundID: "rain", level: 0.6, fadeSeconds: 600),
            ScheduleRule(minuteOfDay: 2 * 60 + 30, action: .play, soundID: "pink", fadeSeconds: 0),
            ScheduleRule(minuteOfDay: 23 * 60, action: .stop, fadeSeconds: 300),
        ]
        config.volume.night = NightCap(from: 22 * 60, to: 7 * 60, maxLevel: 0.3)
        config.clock.timeZone = "Europe/Berlin"
        config.clock.zone = (try? TimeZoneRules(name: "Europe/Berlin", tzif: centralEuropeanTZif)) ?? .utc
        return config
    }

    /// A TZif file of one type (CET, +1 h) and a footer rule with summer
    /// time, as `/usr/share/zoneinfo/Europe/Berlin` says after its last transition.
    static let centralEuropeanTZif: [UInt8] = {
        func be32(_ v: Int32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (24 - 8 * $0)) } }
        let header = Array("TZif2".utf8) + [UInt8](repeating: 0, count: 15) + [0, 0, 0, 0, 1, 4].flatMap { be32($0) }
        let block = header + be32(3600) + [0, 0] + Array("CET".utf8) + [0]
        return block + block + Array("\nCET-1CEST,M3.5.0,M10.5.0/3\n".utf8)
    }()

    /// Reduces `action` and whatever the world answers at once (reservations
    /// written, the engine's reports), checking every effect.
    mutating func send(_ action: SpeakerAction) {
        var queue = [action]
        while !queue.isEmpty {
            for effect in speaker.reduce(queue.removeFirst()) { queue += check(effect) }
        }
    }

    /// The payload arrives on the `command` topic.
    mutating func deliver(_ payload: [UInt8]) {
        pass(ms: 1)
        send(.command(IncomingCommand(payload: payload), at: now))
    }

    mutating func perform(_ op: TimeScript.Op) {
        pass(ms: 1)
        switch op {
        case .step(let seconds):
            clock.ms += seconds * 1000
            stepped()
        case .forwardTo(let secondOfDay):
            let wall = clock.reading.seconds
            var target = wall / 86_400 * 86_400 + secondOfDay
            if target <= wall { target += 86_400 }
            clock.ms = target * 1000
            stepped()
        case .pass(let ms):
            pass(ms: ms)
        case let .sync(synced, didStep):
            clock.synced = synced
            if didStep { stepped() }
        case .slew(let ms):
            clock.ms += ms
            noteWall()
        case .audio(let available):
            guard available != audioAvailable else { return }
            audioAvailable = available
            send(.engine(available ? .available : .unavailable(reason: "fuzz: device gone"), at: now))
        case .command:
            break
        }
    }

    private mutating func stepped() {
        noteWall()
        send(.clockStepped(at: now))
    }

    /// Lets `ms` pass on both clocks, delivering each deadline's tick and
    /// the end of the engine's fade when due (past the tick budget, one
    /// late tick at the end: a process that was not scheduled).
    mutating func pass(ms: Int64) {
        let end = now.advanced(byMilliseconds: Int(ms))
        var repeats = 0
        while ticks < Self.tickBudget, let due = [speaker.nextDeadline, fade?.due].compactMap({ $0 }).min(), due <= end {
            advanceClocks(to: due)
            if let fade, fade.due <= due {
                self.fade = nil
                send(.engine(.longFadeDone(ticket: fade.ticket), at: now))
                continue
            }
            ticks += 1
            send(.tick(due))
            if let next = speaker.nextDeadline, next <= due {
                repeats += 1
                precondition(repeats < 100, "a tick at \(due) leaves the deadline \(next) due")
            } else {
                repeats = 0
            }
        }
        advanceClocks(to: end)
        if ticks >= Self.tickBudget, let due = speaker.nextDeadline, due <= end { send(.tick(end)) }
    }

    private mutating func advanceClocks(to instant: MonotonicInstant) {
        guard instant > now else { return }
        clock.ms += Int64(instant.nanoseconds(since: now) / 1_000_000)
        now = instant
        noteWall()
    }

    /// Follows the wall clock for the schedule's fresh start after a large step back.
    private mutating func noteWall() {
        let wall = clock.reading.seconds
        if latestWall - wall > Self.resetBackwardSeconds { fired = [] }
        latestWall = latestWall - wall > Self.resetBackwardSeconds ? wall : max(latestWall, wall)
    }

    /// Checks one effect; returns what the world answers to it at once.
    private mutating func check(_ effect: SpeakerEffect) -> [SpeakerAction] {
        switch effect {
        case .publish(let publication):
            checkPublication(publication)
        case .log(_, let line):
            checkFiring(line)
        case .reserveRevisions(let through):
            return [.revisionReservation(through: through, failure: nil, at: now)]
        case .audio(let request):
            return engineAnswer(request)
        default:
            break
        }
        return []
    }

    private mutating func checkPublication(_ publication: Publication) {
        if publication.topic.hasSuffix("/command/result") {
            results += 1
            let value = try? JSONParser().parse(publication.payload)
            if value?["ok"]?.boolValue == true {
                // A result goes out just ahead of the `session` it names.
                let revision = value?["revision"]?.numberValue.map { UInt64($0) } ?? 0
                precondition(revision >= lastRevision ?? 0, "accepted at revision \(revision), already published \(lastRevision ?? 0)")
                acceptedRevision = revision
            }
        } else if publication.topic.hasSuffix("/session") {
            guard let number = (try? JSONParser().parse(publication.payload))?["revision"]?.numberValue else {
                preconditionFailure("a session without a revision: \(publication.text)")
            }
            let revision = UInt64(number)
            precondition(lastRevision.map { revision > $0 } ?? true,
                         "session revision \(revision) after \(lastRevision.map(String.init) ?? "-")")
            lastRevision = revision
            published.insert(revision)
        }
    }

    /// `schedule rule 1 (play at 02:30, occurrence 1800000000 = …) fires`:
    /// each occurrence once, and not before its time.
    private mutating func checkFiring(_ line: String) {
        guard line.hasPrefix("schedule rule "), line.hasSuffix(") fires") else { return }
        let words = line.split(separator: " ")
        let after = words.firstIndex(of: "occurrence").map { words.index(after: $0) }
        guard let rule = Int64(words[2]), let after, after < words.endIndex, let occurrence = Int64(words[after]) else {
            preconditionFailure("unreadable firing: \(line)")
        }
        precondition(occurrence <= clock.reading.seconds, "fired before its time (wall \(clock.reading.seconds)): \(line)")
        precondition(fired.insert([rule, occurrence]).inserted, "fired twice: \(line)")
    }

    /// The engine: transport requests take effect at once, a long fade
    /// ends after its duration, mixer writes succeed.
    private mutating func engineAnswer(_ request: AudioRequest) -> [SpeakerAction] {
        switch request {
        case .play(_, _, let ticket), .switchTo(_, _, let ticket), .resume(_, let ticket):
            return [.engine(.playing(ticket: ticket), at: now)]
        case .pause(_, let ticket):
            return [.engine(.paused(ticket: ticket), at: now)]
        case let .longFade(_, overMs, ticket):
            if overMs == 0 {
                fade = nil
                return [.engine(.longFadeDone(ticket: ticket), at: now)]
            }
            fade = (ticket, now.advanced(byMilliseconds: overMs))
        case .setMixerLevel(_, let ticket):
            return [.engine(.levelSet(ticket: ticket), at: now)]
        case .setLevel, .mixes, .setLayerLevel, .setMuted:
            break
        }
        return []
    }
}
