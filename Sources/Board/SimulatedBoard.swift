// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
import SpeakerSystem

/// The simulated board (`board.kind: "simulated"`): stands in for the GPIO
/// chip and produces timestamped ``LineEdge``s, so the same debounce, gesture
/// and quadrature decoders run as on the real board. Driven by text commands
/// (``handle(command:)``, see ``BoardCommand``) from the control socket or the
/// `demo` keyboard.
///
/// Edges happen in real time: each command becomes a script of edges on one
/// ordered schedule, one ``EventLoop`` timer is armed for the next edge, and
/// each edge is delivered to `onEdge` with its *scheduled* monotonic
/// timestamp (like a kernel edge timestamp), however late the loop runs.
/// Commands never interleave: a command starts no earlier than
/// ``commandGapMilliseconds`` after the last edge of the previous one (so
/// `press next` twice gives two separate presses even with debouncing, and a
/// `hold` delays whatever is queued behind it).
/// To press two buttons together use `down A`, `press B`, `up A`.
///
/// Levels are logical (`isActive` true = pressed/closed); all lines start
/// inactive. Threading: loop thread only; `onEdge` runs on it.
public final class SimulatedBoard {
    /// How long `press` holds a button down.
    public let pressMilliseconds: Int
    /// Time between the four quadrature transitions of a detent.
    public let stepMilliseconds: Int
    /// Pause before a command queued behind unfinished edges.
    public let commandGapMilliseconds: Int
    /// Most edges waiting to be delivered; a command that would queue more
    /// is refused (`error: busy …`), so a flood of `turn +100` cannot grow
    /// memory without bound. 4,096 edges is ~12 s of turning at 3 ms a step.
    public let maxPendingEdges: Int
    /// Most amp pulses kept in ``pulseLog`` (the oldest are dropped).
    public static let pulseLogLimit = 4_096

    private let loop: any EventLoopProtocol
    private let logger: Logger
    private let onEdge: (LineEdge) -> Void
    /// The speaker's simulated wall clock (`clock` commands), when it has one.
    private let clock: SimulatedWallClock?
    private var bounce: ContactBounce
    private var bounceEnabled = false
    /// Edges not yet delivered, in time order (scripts only ever append later times).
    private var pending: [ScheduledEdge] = []
    private var timer: LoopTimerID?
    /// The level of each line once every pending edge has happened.
    private var projected: [InputLine: Bool] = [:]
    /// The instant of the last edge ever scheduled (0 before the first).
    private var lastScheduled: UInt64 = 0
    private var upPulses = 0
    private var pulseStarts: [Bool: UInt64] = [:]
    private var downPulses = 0

    /// The level of each line as delivered so far (absent = inactive).
    public private(set) var levels: [InputLine: Bool] = [:]

    /// Creates the board with every line inactive. `seed` makes contact
    /// bounce reproducible. Logs its configuration once.
    public init(
        loop: any EventLoopProtocol, logger: Logger,
        pressMilliseconds: Int = 50, stepMilliseconds: Int = 3, commandGapMilliseconds: Int = 50,
        maxPendingEdges: Int = 4_096, seed: UInt64 = 0x5EED_B0A4D, clock: SimulatedWallClock? = nil,
        onEdge: @escaping (LineEdge) -> Void
    ) {
        self.loop = loop
        self.clock = clock
        self.logger = logger
        // At least 1 ms each, so a bounce burst (≤ 0.8 ms) never overlaps the next edge.
        self.pressMilliseconds = max(1, pressMilliseconds)
        self.stepMilliseconds = max(1, stepMilliseconds)
        self.commandGapMilliseconds = max(1, commandGapMilliseconds)
        self.maxPendingEdges = max(16, maxPendingEdges)
        self.bounce = ContactBounce(seed: seed)
        self.onEdge = onEdge
        logger.info("simulated board: press \(self.pressMilliseconds) ms, quadrature step \(self.stepMilliseconds) ms, "
            + "command gap \(self.commandGapMilliseconds) ms, bounce off, all lines inactive")
    }

    /// Runs one text command and answers `ok`, `up=N down=M` for `pulses`,
    /// or `error: …` naming what was wrong (unknown command or button, bad
    /// number, a button that is already down/up).
    public func handle(command line: String) -> String {
        switch BoardCommand.parse(line) {
        case .failure(let error):
            logger.debug("refused \"\(line)\": \(error.message)")
            return error.description
        case .success(let command):
            switch perform(command) {
            case .failure(let error):
                logger.debug("refused \"\(line)\": \(error.message)")
                return error.description
            case .success(let reply):
                logger.debug("\(line) -> \(reply)")
                return reply
            }
        }
    }

    /// Runs a parsed command; the reply as for ``handle(command:)``.
    public func perform(_ command: BoardCommand) -> Result<String, BoardCommandError> {
        let press = UInt64(pressMilliseconds) * 1_000_000
        if let edges = command.edgeCount, pending.count + edges > maxPendingEdges {
            return .failure(BoardCommandError("busy: \(pending.count) edges still queued and this command adds \(edges) "
                                              + "(at most \(maxPendingEdges)); send it again once they have played out"))
        }
        switch command {
        case .press(let line):
            if let error = require(line, down: false, for: "press") { return .failure(error) }
            enqueue([(0, line, true), (press, line, false)])
        case .hold(let line, let milliseconds):
            if let error = require(line, down: false, for: "hold") { return .failure(error) }
            enqueue([(0, line, true), (UInt64(milliseconds) * 1_000_000, line, false)])
        case .down(let line):
            if let error = require(line, down: false, for: "down") { return .failure(error) }
            enqueue([(0, line, true)])
        case .up(let line):
            if let error = require(line, down: true, for: "up") { return .failure(error) }
            enqueue([(0, line, false)])
        case .turn(let detents):
            enqueue(Self.quadrature(detents: detents, stepNanoseconds: UInt64(stepMilliseconds) * 1_000_000))
        case .bounce(let on):
            bounceEnabled = on
            logger.info("simulated board: bounce \(on ? "on" : "off")")
        case .pulses:
            return .success("up=\(upPulses) down=\(downPulses)")
        case .clockStep(let seconds):
            guard let clock else { return .failure(BoardCommandError("this speaker has no simulated clock")) }
            clock.step(bySeconds: seconds)
            logger.info("simulated clock: \(seconds > 0 ? "+" : "")\(seconds) s, now \(clock.offset) s from the host's")
            return .success("ok offset=\(clock.offset)")
        case .clockSynced(let synced):
            guard let clock else { return .failure(BoardCommandError("this speaker has no simulated clock")) }
            clock.setSynced(synced)
            logger.info("simulated clock: synced \(synced.map { $0 ? "on" : "off" } ?? "as the host")")
        }
        return .success("ok")
    }

    /// Records one pulse the `gpio-step` volume driver sent to the amp's UP
    /// (`up: true`) or DOWN line; ``handle(command:)`` answers `pulses` with
    /// the counts.
    public func recordPulse(up: Bool) {
        if up { upPulses += 1 } else { downPulses += 1 }
    }

    /// Pulses recorded so far by ``recordPulse(up:)``.
    public var pulseCounts: (up: Int, down: Int) { (upPulses, downPulses) }

    /// Every completed amp pulse driven through ``drive(up:active:at:)`` (by
    /// the shared ``AmpStepper``), with its start and end instants: the same
    /// schedule the GPIO board would put on the real lines.
    public private(set) var pulseLog: [AmpPulseRecord] = []
    /// Every status LED level driven through ``driveLed(lit:at:)`` (by the
    /// shared ``StatusLedDriver``), the levels the GPIO board would drive.
    public internal(set) var ledLog: [LedLevelRecord] = []

    /// True while edges are still waiting to be delivered.
    public var isBusy: Bool { !pending.isEmpty }

    /// The edge script of `detents` full cycles: clockwise (positive) A leads
    /// B — A=1, B=1, A=0, B=0 — counter-clockwise B leads; `step` apart.
    static func quadrature(detents: Int, stepNanoseconds step: UInt64) -> [(UInt64, InputLine, Bool)] {
        let (lead, lag): (InputLine, InputLine) = detents > 0 ? (.encoderA, .encoderB) : (.encoderB, .encoderA)
        var script: [(UInt64, InputLine, Bool)] = []
        var at: UInt64 = 0
        for _ in 0..<abs(detents) {
            for (line, level) in [(lead, true), (lag, true), (lead, false), (lag, false)] {
                script.append((at, line, level))
                at += step
            }
        }
        return script
    }

    // MARK: Schedule

    private func require(_ line: InputLine, down: Bool, for verb: String) -> BoardCommandError? {
        let isDown = projected[line] ?? false
        if isDown == down { return nil }
        return BoardCommandError(isDown
            ? "\(line.rawValue) is held down; send \"up \(line.rawValue)\" before \"\(verb)\""
            : "\(line.rawValue) is not down")
    }

    /// Appends a script (offsets from its start) to the schedule, expanding
    /// each edge into a bounce burst when bounce is on, and arms the timer.
    private func enqueue(_ script: [(offset: UInt64, line: InputLine, isActive: Bool)]) {
        let now = loop.now()
        let gap = UInt64(commandGapMilliseconds) * 1_000_000
        // Never before the previous command's last edge plus the gap (0 at first).
        let start = max(now, lastScheduled + gap)
        for step in script {
            let edge = ScheduledEdge(at: start + step.offset, line: step.line, isActive: step.isActive)
            let edges = bounceEnabled ? bounce.burst(for: edge) : [edge]
            pending.append(contentsOf: edges)
            projected[step.line] = step.isActive
        }
        lastScheduled = pending.last?.at ?? lastScheduled
        armTimer()
    }

    private func armTimer() {
        guard timer == nil, let next = pending.first else { return }
        timer = loop.schedule(at: next.at) { [weak self] in
            self?.timer = nil
            self?.deliverDue()
        }
    }

    /// Delivers every edge whose instant has come, in order, then re-arms.
    private func deliverDue() {
        let now = loop.now()
        let due = pending.prefix { $0.at <= now }.count
        let edges = pending[0..<due]
        pending.removeFirst(due)
        for edge in edges {
            levels[edge.line] = edge.isActive
            onEdge(LineEdge(line: edge.line, isActive: edge.isActive, at: MonotonicInstant(nanoseconds: edge.at)))
        }
        armTimer()
    }
}

/// One amp pulse as the simulated board recorded it.
public struct AmpPulseRecord: Equatable, Sendable {
    public var up: Bool
    /// Monotonic start and end (ns) as scheduled.
    public var start: UInt64
    public var end: UInt64
}

extension SimulatedBoard: AmpStepLines {
    /// Records the UP/DOWN line levels the amp stepper would drive; a pulse is
    /// counted (``recordPulse(up:)``, `pulses`) when its line goes inactive.
    public func drive(up: Bool, active: Bool, at: UInt64) throws(GPIOError) {
        if active {
            pulseStarts[up] = at
        } else if let start = pulseStarts.removeValue(forKey: up) {
            pulseLog.append(AmpPulseRecord(up: up, start: start, end: at))
            if pulseLog.count > Self.pulseLogLimit + Self.pulseLogLimit / 4 {
                pulseLog.removeFirst(pulseLog.count - Self.pulseLogLimit)
            }
            recordPulse(up: up)
        }
    }
}

/// One status LED level change as the simulated board recorded it.
public struct LedLevelRecord: Equatable, Sendable {
    public var lit: Bool
    /// Monotonic instant (ns) as scheduled.
    public var at: UInt64
}

extension SimulatedBoard: StatusLedLines {
    /// Records the level the status LED would show (kept to the last 256 changes).
    public func driveLed(lit: Bool, at: UInt64) throws(GPIOError) {
        ledLog.append(LedLevelRecord(lit: lit, at: at))
        if ledLog.count > 320 { ledLog.removeFirst(ledLog.count - 256) }
    }
}

extension BoardCommand {
    /// How many edges the command queues (before contact bounce), nil for
    /// commands that queue none.
    var edgeCount: Int? {
        switch self {
        case .press, .hold: return 2
        case .down, .up: return 1
        case .turn(let detents): return 4 * abs(detents)
        case .bounce, .pulses, .clockStep, .clockSynced: return nil
        }
    }
}
