import SpeakerCore
import SpeakerSystem
import Board

/// The board: edges into the core, amp pulses out. `board.kind "simulated"`
/// runs the ``SimulatedBoard`` (control socket, demo keys); `"gpio"` the
/// libgpiod ``GPIOBoard``. In `gpio-step` volume mode one ``AmpStepper``
/// (the same pulse schedule for both boards) drives the board's UP/DOWN lines.
/// Loop thread only.
extension SpeakerRuntime {
    func startBoard() throws {
        let lines: AmpStepLines
        switch config.board.kind {
        case .simulated:
            lines = try startSimulatedBoard()
        case .gpio:
            do {
                let gpio = try GPIOBoard(
                    config: config, loop: loop, logger: logger.named("gpio"),
                    onEdge: { [unowned self] edge in self.dispatch(.lineEdge(edge)) },
                    onFailure: { [unowned self] error in self.boardFailed(error) })
                gpioBoard = gpio
                lines = gpio
            } catch {
                throw StartupError(exitCode: error.exitCode, message: error.description)
            }
        }
        if config.volume.mode == .gpioStep {
            let step = config.volume.gpioStep
            amp = AmpStepper(loop: loop, lines: lines, pulseMilliseconds: step.pulseMs, gapMilliseconds: step.gapMs,
                             maxPending: step.maxPending, logger: logger.named("amp")) { [unowned self] error in
                self.boardFailed(error)
            }
        }
    }

    private func startSimulatedBoard() throws -> SimulatedBoard {
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
        return board
    }

    /// A hardware failure while running (chip gone, output refused): log it,
    /// stop the loop (graceful shutdown follows) and exit 2.
    func boardFailed(_ error: GPIOError) {
        logger.error("\(error)")
        exitCode = 2
        loop.stop()
    }

    /// Queues pulses for a step-only amplifier's UP/DOWN lines (bounded, coalesced).
    func perform(_ pulse: AmpPulse) {
        amp?.enqueue(pulse)
    }
}
