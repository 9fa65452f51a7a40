// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
import SpeakerSystem
import Board

/// A ``GPIOBoard`` run again from a trace recorded in the HIL VM
/// (`HIL_GPIO_TRACE=1 Tests/HIL/run`, files in `Traces/VARIANT/NAME.trace`):
/// a ``ReplayedGPIOLines`` serves the recorded libgpiod answers and the board
/// runs on a ``ManualEventLoop`` started at the trace's first take, with the
/// config the VM ran (`Tests/HIL/guest/software.json`). Collects every edge
/// the board delivers with the loop time it was delivered at.
final class BoardReplay {
    struct Delivery: Equatable, CustomStringConvertible {
        var edge: LineEdge
        var at: UInt64
        var description: String { "\(edge) at \(MonotonicInstant(nanoseconds: at))" }
    }

    let trace: GPIOTrace
    private let text: String
    let config: SpeakerConfig
    let loop: ManualEventLoop
    let lines: ReplayedGPIOLines
    let log = MemoryLogBackend()
    private(set) var board: GPIOBoard?
    private(set) var deliveries: [Delivery] = []
    private(set) var failures: [GPIOError] = []

    init(_ variant: String, _ name: String) throws {
        let directory = Self.directory()
        text = try FileIO.readText(path: "\(directory)/Traces/\(variant)/\(name).trace")
        trace = try GPIOTrace(text: text)
        config = try ConfigDecoder(hostname: "hil").decode(try FileIO.read(path: "\(directory)/../HIL/guest/software.json"))
        let takes = trace.entries.compactMap { if case .take(let at, _) = $0 { return at } else { return nil } }
        loop = ManualEventLoop(start: (takes.first ?? 1_000_000_000) - 1_000_000)
        lines = try ReplayedGPIOLines(trace: trace)
    }

    /// Opens the board, replays every take, lets the reorder window pass and closes it.
    func run() throws {
        let board = try GPIOBoard(config: config, loop: loop, logger: Logger(component: "gpio", threshold: .debug, backend: log),
                                  lines: lines, onEdge: { [unowned self] edge in deliveries.append(Delivery(edge: edge, at: loop.now())) },
                                  onFailure: { [unowned self] error in failures.append(error) })
        self.board = board
        lines.play(on: loop)
        loop.advanceTime(byMilliseconds: 100)
        board.close()
    }

    var edges: [LineEdge] { deliveries.map(\.edge) }

    /// Every recorded read, with the loop time of the take that carried it.
    var reads: [(takenAt: UInt64, read: EdgeRead)] {
        trace.entries.flatMap { entry -> [(takenAt: UInt64, read: EdgeRead)] in
            guard case .take(let at, let taken) = entry else { return [] }
            return taken.reads.map { (at, $0) }
        }
    }

    /// The edges the speaker delivered in the VM (its debug log, appended to
    /// the trace as `# delivered LINE=LEVEL@MS` comments).
    var deliveredInTheVM: [String] {
        text.split(separator: "\n").filter { $0.hasPrefix("# delivered ") }.map { String($0.dropFirst(12)) }
    }

    /// The decoded inputs, as the core's decoders make them from the delivered edges.
    func inputEvents() -> [InputEvent] {
        var decoders = InputDecoders(config: config.inputs)
        var events = edges.flatMap { decoders.edge($0) }
        events += decoders.advance(to: MonotonicInstant(nanoseconds: loop.now() + 10_000_000_000))
        return events
    }

    /// Detents per turn, turns being runs of encoder edges less than 100 ms apart.
    func detentsPerTurn() -> [Int] {
        var quadrature = QuadratureDecoder(stepsPerDetent: config.inputs.encoder.stepsPerDetent)
        var turns: [Int] = []
        var last: UInt64?
        for edge in edges where !edge.line.isButton {
            if last.map({ edge.at.nanoseconds > $0 + 100_000_000 }) ?? true { turns.append(0) }
            last = edge.at.nanoseconds
            turns[turns.count - 1] += quadrature.edge(phaseA: edge.line == .encoderA, isActive: edge.isActive)
        }
        return turns
    }

    static func directory(_ file: String = #filePath) -> String {
        String(file[..<(file.lastIndex(of: "/") ?? file.endIndex)])
    }
}
