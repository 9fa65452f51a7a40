import SpeakerCore
import SpeakerSystem
import Board

/// The board: edges into the core, amp pulses out.
extension SpeakerRuntime {
    func startBoard() throws {
        let board = SimulatedBoard(loop: loop, logger: logger.named("board")) { [unowned self] edge in
            self.dispatch(.lineEdge(edge))
        }
        self.board = board
        if let path = config.board.controlSocket {
            do {
                controlServer = try LineServer(path: path, loop: loop, logger: logger.named("control")) { [unowned board] line in
                    board.handle(command: line)
                }
            } catch {
                throw StartupError(exitCode: 2, message: "board.controlSocket \(path): \(error)")
            }
        }
        if let demo {
            try demo.start(loop: loop, board: board) { [unowned self] in self.loop.stop() }
        }
    }

    /// Pulses a step-only amplifier's UP/DOWN lines.
    func perform(_ pulse: AmpPulse) {
        switch pulse {
        case .up(let n): for _ in 0..<n { board?.recordPulse(up: true) }
        case .down(let n): for _ in 0..<n { board?.recordPulse(up: false) }
        }
    }
}
