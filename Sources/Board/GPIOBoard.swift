// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerCore
import SpeakerSystem

/// The real board (`board.kind: "gpio"`): requests the configured lines
/// through libgpiod (v1 or v2, chosen at build time in CGPIOD; every access
/// goes through a ``GPIOLineAccess``, live ``LibGPIODLines``), by **name**
/// across all chips. Inputs report both edges with kernel (monotonic)
/// timestamps, the configured bias and polarity, and — where the API has it
/// (v2) — a short kernel debounce on the buttons; the core's software
/// debounce and quadrature decoder always run on top. One reader thread
/// (``EdgeReaderThread``, real-time where allowed) drains every input's kernel
/// queue as soon as an edge is queued and wakes the event loop, which
/// gives one ``LineEdge`` per edge to `onEdge` (``LineLevelResync`` adds one
/// where edges were lost), in kernel timestamp order across lines, 3 ms after
/// the edge (``EdgeReorder``). The edges keep the kernel's timestamps; when
/// they are released is decided on the loop's clock (`loop.now()`), so on
/// ``ManualEventLoop`` with a ``ReplayedGPIOLines`` it runs exactly.
/// In `gpio-step` volume mode it also holds the amp's UP/DOWN lines as
/// outputs (``AmpStepLines``). A chip that goes away while running (read
/// error, hang-up, or its `/dev` node deleted) is reported once to
/// `onFailure`. Threading: loop thread only.
public final class GPIOBoard: AmpStepLines, StatusLedLines {
    /// The consumer name the kernel shows for our lines (`gpioinfo`).
    public static let consumer = "ambient-speaker"
    /// Longest kernel debounce asked for a button (µs); encoder phases get none.
    public static let maxKernelDebounceMicroseconds = 5_000

    private struct Input {
        var role: InputLine
        var location: GPIOLineLocation
        var request: GPIORequestID
    }
    private struct Output {
        var location: GPIOLineLocation
        var request: GPIORequestID
    }

    private let loop: any EventLoopProtocol
    private let lines: any GPIOLineAccess
    private let logger: Logger
    private let onEdge: (LineEdge) -> Void
    private let onFailure: (GPIOError) -> Void
    private var inputs: [Input] = []
    private var outputs: [Bool: Output] = [:]  // true = UP
    private var led: Output?
    private var devWatch: (watch: DirectoryDeletionWatch, registration: LoopRegistration)?
    private var failed = false
    private var readerRunning = false
    private var readerRegistration: LoopRegistration?
    private var resync = LineLevelResync()
    private var reportedPriority = false
    /// Edges wait `reorderWindowNs` after their kernel timestamp, so that the
    /// lines' separate queues merge in order (``EdgeReorder``).
    private var reorder = EdgeReorder(windowNs: GPIOBoard.reorderWindowNs)
    private var reorderTimer: LoopTimerID?
    /// 3 ms: more than the spread between two lines' kernel queues seen in
    /// the HIL VM under load, well inside the knob's 30 ms response budget.
    public static let reorderWindowNs: UInt64 = 3_000_000

    /// Finds and requests every configured line through `lines`; throws
    /// ``GPIOError`` (unknown line → exit 1; permission, busy line, … → exit 2).
    /// Logs the resolved wiring once.
    public init(config: SpeakerConfig, loop: any EventLoopProtocol, logger: Logger, chipDirectory: String = "/dev",
                lines: any GPIOLineAccess = LibGPIODLines(),
                onEdge: @escaping (LineEdge) -> Void, onFailure: @escaping (GPIOError) -> Void) throws(GPIOError) {
        self.loop = loop
        self.lines = lines
        self.logger = logger
        self.onEdge = onEdge
        self.onFailure = onFailure
        let i = config.inputs
        var wanted: [(InputLine, String, Bool, LineBias, Int)] = []
        let library = lines.library
        let buttonDebounce = library.hasKernelDebounce ? min(Self.maxKernelDebounceMicroseconds, i.debounceMs * 250) : 0
        wanted.append((.playPause, i.playPause.line, i.playPause.activeLow, i.playPause.bias, buttonDebounce))
        wanted.append((.next, i.next.line, i.next.activeLow, i.next.bias, buttonDebounce))
        wanted.append((.previous, i.previous.line, i.previous.activeLow, i.previous.bias, buttonDebounce))
        if let sw = i.encoderSwitch { wanted.append((.encoderSwitch, sw.line, sw.activeLow, sw.bias, buttonDebounce)) }
        wanted.append((.encoderA, i.encoder.a, i.encoder.activeLow, i.encoder.bias, 0))
        wanted.append((.encoderB, i.encoder.b, i.encoder.activeLow, i.encoder.bias, 0))
        let step = config.volume.mode == .gpioStep ? config.volume.gpioStep : nil
        var names = wanted.map { $0.1 }
        if let step { names += [step.up, step.down] }
        if let statusLed = config.statusLed { names.append(statusLed.line) }
        let found = try lines.locate(names, directory: chipDirectory)
        do throws(GPIOError) {
            for (role, name, activeLow, bias, debounce) in wanted {
                guard let location = found[name] else { throw GPIOError.unknownLine(name: name, chips: []) }
                let settings = GPIOInputSettings(activeLow: activeLow, bias: bias, debounceMicroseconds: debounce)
                let request = try lines.requestInput(location, settings, consumer: Self.consumer)
                inputs.append(Input(role: role, location: location, request: request))
                logger.info("\(role.rawValue): \(location), \(bias.rawValue), \(activeLow ? "active-low" : "active-high"), "
                    + "both edges, kernel debounce \(debounce) µs")
            }
            if let step {
                for (up, name) in [(true, step.up), (false, step.down)] {
                    guard let location = found[name] else { throw GPIOError.unknownLine(name: name, chips: []) }
                    outputs[up] = Output(location: location,
                                         request: try lines.requestOutput(location, activeLow: step.activeLow, consumer: Self.consumer))
                    logger.info("amp \(up ? "UP" : "DOWN"): \(location), output, \(step.activeLow ? "active-low" : "active-high")")
                }
            }
            if let statusLed = config.statusLed {
                guard let location = found[statusLed.line] else { throw GPIOError.unknownLine(name: statusLed.line, chips: []) }
                led = Output(location: location,
                             request: try lines.requestOutput(location, activeLow: statusLed.activeLow, consumer: Self.consumer))
                logger.info("status LED: \(location), output, \(statusLed.activeLow ? "active-low" : "active-high")")
            }
        } catch {
            releaseAll()
            throw error
        }
        do throws(GPIOError) {
            let ready = try lines.startReader(inputs.map(\.request))
            readerRunning = true
            readerRegistration = loop.addReader(fd: ready) { [unowned self] in self.takeReads() }
        } catch {
            releaseAll()
            throw error
        }
        watchChipNodes(directory: chipDirectory)
        logger.info("gpio board: \(library.description), \(inputs.count) inputs, \(outputs.count + (led == nil ? 0 : 1)) outputs")
    }

    deinit { releaseAll() }

    /// Releases every line and stops watching (idempotent).
    public func close() { releaseAll() }

    // MARK: AmpStepLines

    public func drive(up: Bool, active: Bool, at: UInt64) throws(GPIOError) {
        guard let output = outputs[up] else { return }
        if let e = lines.setOutput(output.request, active: active) {
            throw GPIOError.output(line: output.location.name, location: "\(output.location.chip.name) line \(output.location.line.offset)", errno: e)
        }
    }

    // MARK: StatusLedLines

    public func driveLed(lit: Bool, at: UInt64) throws(GPIOError) {
        guard let led else { return }
        if let e = lines.setOutput(led.request, active: lit) {
            throw GPIOError.output(line: led.location.name, location: "\(led.location.chip.name) line \(led.location.line.offset)", errno: e)
        }
    }

    // MARK: Events

    /// The reader thread has drained some queues: each drain's edges (with
    /// the level put right where edges were lost) go through the reorder window.
    private func takeReads() {
        guard !failed, readerRunning else { return }
        let taken = lines.takeReads()
        let reads = taken.reads, realtime = taken.realtime
        if let realtime, !reportedPriority {
            reportedPriority = true
            if realtime { logger.info("gpio reader thread runs SCHED_FIFO priority \(EdgeReaderThread.priority)") } else {
                logger.notice("gpio reader thread runs without real-time priority: SCHED_FIFO refused (needs root, CAP_SYS_NICE or LimitRTPRIO=); a busy system may drop encoder edges")
            }
        }
        var edges: [LineEdge] = []
        for read in reads {
            let input = inputs[read.input]
            if let e = read.error {
                fail(.chipGone(line: input.location.name, location: "\(input.location.chip.name) line \(input.location.line.offset)", errno: e))
                return
            }
            logger.debug("read \(input.role.rawValue) at \(MonotonicInstant(nanoseconds: read.readAt)): \(read.events.count) "
                + read.events.map { "\($0.isActive ? 1 : 0)@\($0.at)" }.joined(separator: " ")
                + (read.reread.map { " reread \($0 ? 1 : 0)" } ?? ""))
            let lost = read.events.reduce(0) { $0 + Int($1.lost) }
            if lost > 0 {
                logger.warning("\(input.location): the kernel dropped \(lost) edge(s) (its queue was full)")
            }
            let before = resync.resyncs
            edges += resync.edges(line: input.role, events: read.events, reread: read.reread, rereadAt: read.readAt)
            if resync.resyncs > before {
                logger.warning("\(input.location): edges were lost (the kernel queue of \(lines.library.eventQueueSize) was full); level re-read and put right")
            }
        }
        reorder.add(edges)
        deliverDueEdges()
    }

    /// Delivers the edges whose reorder window has passed (``EdgeReorder``)
    /// and arms a timer for the next one.
    private func deliverDueEdges() {
        if let timer = reorderTimer { loop.cancel(timer) }
        reorderTimer = nil
        for edge in reorder.release(now: loop.now()) {
            logger.debug("edge \(edge)")
            onEdge(edge)
        }
        if let due = reorder.nextRelease {
            reorderTimer = loop.schedule(at: due) { [unowned self] in
                self.reorderTimer = nil
                self.deliverDueEdges()
            }
        }
    }

    private func fail(_ error: GPIOError) {
        guard !failed else { return }
        failed = true
        stopReader()
        if let readerRegistration { loop.remove(readerRegistration) }
        readerRegistration = nil
        onFailure(error)
    }

    /// Watches the chip directory for our chips' nodes being deleted (the
    /// kernel of Debian 12 does not wake a line fd when its chip goes away).
    private func watchChipNodes(directory: String) {
        let watch: DirectoryDeletionWatch
        do throws(SystemError) {
            watch = try DirectoryDeletionWatch(directory: directory)
        } catch {
            logger.warning("\(error); a removed chip will go unnoticed")
            return
        }
        let registration = loop.addReader(fd: watch.fd) { [unowned self] in self.readDirectoryChanges(watch) }
        devWatch = (watch, registration)
    }

    private func readDirectoryChanges(_ watch: DirectoryDeletionWatch) {
        let names: [String]
        do throws(SystemError) {
            names = try watch.deletedNames()
        } catch {
            logger.warning("\(error); a removed chip will go unnoticed")
            if let devWatch { loop.remove(devWatch.registration) }
            devWatch = nil
            return
        }
        let held = inputs.map(\.location) + outputs.values.map(\.location)
        for name in names {
            if let gone = held.first(where: { $0.chip.name == name }) {
                fail(.chipGone(line: gone.name, location: "\(gone.chip.name) line \(gone.line.offset)", errno: ENODEV))
                return
            }
        }
    }

    private func releaseAll() {
        if let timer = reorderTimer { loop.cancel(timer) }
        reorderTimer = nil
        stopReader()  // the requests are ours again
        if let readerRegistration { loop.remove(readerRegistration) }
        readerRegistration = nil
        for input in inputs { lines.release(input.request) }
        inputs.removeAll()
        for output in outputs.values { lines.release(output.request) }
        outputs.removeAll()
        if let led { lines.release(led.request) }
        led = nil
        if let devWatch { loop.remove(devWatch.registration) }
        devWatch = nil  // closes the inotify descriptor
    }

    private func stopReader() {
        guard readerRunning else { return }
        readerRunning = false
        lines.stopReader()
    }
}
