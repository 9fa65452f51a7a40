// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import CGPIOD
import SpeakerCore
import SpeakerSystem

/// The real board (`board.kind: "gpio"`): requests the configured lines
/// through libgpiod (v1 or v2, chosen at build time in CGPIOD), by **name**
/// across all chips. Inputs report both edges with kernel (monotonic)
/// timestamps, the configured bias and polarity, and — where the API has it
/// (v2) — a short kernel debounce on the buttons; the core's software
/// debounce and quadrature decoder always run on top. One reader thread
/// (``EdgeReaderThread``, real-time where allowed) drains every input's kernel
/// queue as soon as an edge is queued and wakes the main ``EventLoop``, which
/// gives one ``LineEdge`` per edge to `onEdge` (``LineLevelResync`` adds one
/// where edges were lost), in kernel timestamp order across lines, 3 ms after
/// the edge (``EdgeReorder``).
/// In `gpio-step` volume mode it also holds the amp's UP/DOWN lines as
/// outputs (``AmpStepLines``). A chip that goes away while running (read
/// error, hang-up, or its `/dev` node deleted) is reported once to
/// `onFailure`. Threading: loop thread only.
public final class GPIOBoard: AmpStepLines {
    /// The consumer name the kernel shows for our lines (`gpioinfo`).
    public static let consumer = "ambient-speaker"
    /// Longest kernel debounce asked for a button (µs); encoder phases get none.
    public static let maxKernelDebounceMicroseconds = 5_000

    private struct Input {
        var role: InputLine
        var location: GPIOLineLocation
        var request: OpaquePointer
    }
    private struct Output {
        var location: GPIOLineLocation
        var request: OpaquePointer
    }

    private let loop: EventLoop
    private let logger: Logger
    private let onEdge: (LineEdge) -> Void
    private let onFailure: (GPIOError) -> Void
    private var inputs: [Input] = []
    private var outputs: [Bool: Output] = [:]  // true = UP
    private var devWatch: (watch: DirectoryDeletionWatch, registration: EventLoop.Registration)?
    private var failed = false
    private var reader: EdgeReaderThread?
    private var readerRegistration: EventLoop.Registration?
    private var resync = LineLevelResync()
    private var reportedPriority = false
    /// Edges wait `reorderWindowNs` after their kernel timestamp, so that the
    /// lines' separate queues merge in order (``EdgeReorder``).
    private var reorder = EdgeReorder(windowNs: GPIOBoard.reorderWindowNs)
    private var reorderTimer: EventLoop.TimerID?
    /// 3 ms: more than the spread between two lines' kernel queues seen in
    /// the HIL VM under load, well inside the knob's 30 ms response budget.
    public static let reorderWindowNs: UInt64 = 3_000_000

    /// Finds and requests every configured line; throws ``GPIOError`` (unknown
    /// line → exit 1; permission, busy line, … → exit 2). Logs the resolved
    /// wiring once.
    public init(config: SpeakerConfig, loop: EventLoop, logger: Logger, chipDirectory: String = "/dev",
                onEdge: @escaping (LineEdge) -> Void, onFailure: @escaping (GPIOError) -> Void) throws(GPIOError) {
        self.loop = loop
        self.logger = logger
        self.onEdge = onEdge
        self.onFailure = onFailure
        let i = config.inputs
        var wanted: [(InputLine, String, Bool, LineBias, Int)] = []
        let buttonDebounce = GPIOChips.hasKernelDebounce ? min(Self.maxKernelDebounceMicroseconds, i.debounceMs * 250) : 0
        wanted.append((.playPause, i.playPause.line, i.playPause.activeLow, i.playPause.bias, buttonDebounce))
        wanted.append((.next, i.next.line, i.next.activeLow, i.next.bias, buttonDebounce))
        wanted.append((.previous, i.previous.line, i.previous.activeLow, i.previous.bias, buttonDebounce))
        if let sw = i.encoderSwitch { wanted.append((.encoderSwitch, sw.line, sw.activeLow, sw.bias, buttonDebounce)) }
        wanted.append((.encoderA, i.encoder.a, i.encoder.activeLow, i.encoder.bias, 0))
        wanted.append((.encoderB, i.encoder.b, i.encoder.activeLow, i.encoder.bias, 0))
        let step = config.volume.mode == .gpioStep ? config.volume.gpioStep : nil
        var names = wanted.map { $0.1 }
        if let step { names += [step.up, step.down] }
        let found = try GPIOChips.locate(names, directory: chipDirectory)
        do throws(GPIOError) {
            for (role, name, activeLow, bias, debounce) in wanted {
                guard let location = found[name] else { throw GPIOError.unknownLine(name: name, chips: []) }
                let request = try Self.requestInput(location, activeLow: activeLow, bias: bias, debounceMicroseconds: debounce)
                inputs.append(Input(role: role, location: location, request: request))
                logger.info("\(role.rawValue): \(location), \(bias.rawValue), \(activeLow ? "active-low" : "active-high"), "
                    + "both edges, kernel debounce \(debounce) µs")
            }
            if let step {
                for (up, name) in [(true, step.up), (false, step.down)] {
                    guard let location = found[name] else { throw GPIOError.unknownLine(name: name, chips: []) }
                    outputs[up] = Output(location: location,
                                         request: try Self.requestOutput(location, activeLow: step.activeLow))
                    logger.info("amp \(up ? "UP" : "DOWN"): \(location), output, \(step.activeLow ? "active-low" : "active-high")")
                }
            }
        } catch {
            releaseAll()
            throw error
        }
        for index in inputs.indices {
            do throws(SystemError) {
                try Descriptors.setNonBlocking(cgpiod_request_fd(inputs[index].request))
            } catch {
                releaseAll()
                throw Self.requestError(inputs[index].location, errno: error.errno)
            }
        }
        do throws(SystemError) {
            let reader = try EdgeReaderThread(requests: inputs.map(\.request), queueSize: Int(cgpiod_event_queue_size()))
            readerRegistration = loop.addReader(fd: reader.ready.fd) { [unowned self] in self.takeReads() }
            self.reader = reader
            try reader.start()
        } catch {
            releaseAll()
            throw GPIOError.reader(errno: error.errno)
        }
        watchChipNodes(directory: chipDirectory)
        logger.info("gpio board: \(GPIOChips.libraryDescription), \(inputs.count) inputs, \(outputs.count) outputs")
    }

    deinit { releaseAll() }

    /// Releases every line and stops watching (idempotent).
    public func close() { releaseAll() }

    // MARK: AmpStepLines

    public func drive(up: Bool, active: Bool, at: UInt64) throws(GPIOError) {
        guard let output = outputs[up] else { return }
        if cgpiod_request_set(output.request, active ? 1 : 0) < 0 {
            throw GPIOError.output(line: output.location.line.name, location: "\(output.location.chip.name) line \(output.location.line.offset)", errno: errno)
        }
    }

    // MARK: Events

    /// The reader thread has drained some queues: each drain's edges (with
    /// the level put right where edges were lost) go through the reorder window.
    private func takeReads() {
        guard !failed, let reader else { return }
        let (reads, realtime) = reader.take()
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
                fail(.chipGone(line: input.location.line.name, location: "\(input.location.chip.name) line \(input.location.line.offset)", errno: e))
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
                logger.warning("\(input.location): edges were lost (the kernel queue of \(cgpiod_event_queue_size()) was full); level re-read and put right")
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
        for edge in reorder.release(now: MonotonicClock.now()) {
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
        reader?.stop()
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
                fail(.chipGone(line: gone.line.name, location: "\(gone.chip.name) line \(gone.line.offset)", errno: ENODEV))
                return
            }
        }
    }

    // MARK: Requests

    private static func requestInput(_ location: GPIOLineLocation, activeLow: Bool, bias: LineBias,
                                     debounceMicroseconds: Int) throws(GPIOError) -> OpaquePointer {
        let cBias: cgpiod_bias
        switch bias {
        case .pullUp: cBias = CGPIOD_BIAS_PULL_UP
        case .pullDown: cBias = CGPIOD_BIAS_PULL_DOWN
        case .disabled: cBias = CGPIOD_BIAS_DISABLED
        case .asIs: cBias = CGPIOD_BIAS_AS_IS
        }
        guard let request = cgpiod_request_input(location.chip.path, UInt32(location.line.offset), consumer, cBias,
                                                 activeLow ? 1 : 0, UInt(debounceMicroseconds)) else {
            throw requestError(location, errno: errno)
        }
        return request
    }

    private static func requestOutput(_ location: GPIOLineLocation, activeLow: Bool) throws(GPIOError) -> OpaquePointer {
        guard let request = cgpiod_request_output(location.chip.path, UInt32(location.line.offset), consumer, activeLow ? 1 : 0, 0) else {
            throw requestError(location, errno: errno)
        }
        return request
    }

    /// The request error, naming the consumer that holds a busy line.
    private static func requestError(_ location: GPIOLineLocation, errno e: Int32) -> GPIOError {
        var holder: String?
        if e == EBUSY, let chip = try? GPIOChips.describe(path: location.chip.path), location.line.offset < chip.lines.count {
            holder = chip.lines[location.line.offset].consumer
        }
        return .request(line: location.line.name, location: "\(location.chip.name) line \(location.line.offset)",
                        path: location.chip.path, errno: e, consumer: holder)
    }

    private func releaseAll() {
        if let timer = reorderTimer { loop.cancel(timer) }
        reorderTimer = nil
        reader?.stop()  // joined: the requests are ours again
        reader = nil
        if let readerRegistration { loop.remove(readerRegistration) }
        readerRegistration = nil
        for input in inputs { cgpiod_request_release(input.request) }
        inputs.removeAll()
        for output in outputs.values { cgpiod_request_release(output.request) }
        outputs.removeAll()
        if let devWatch { loop.remove(devWatch.registration) }
        devWatch = nil  // closes the inotify descriptor
    }
}
