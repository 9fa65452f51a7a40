import SpeakerCore
import SpeakerSystem
import Board

/// The board seam: edges into the core as `.lineEdge` actions, `.amp`
/// effects out as pulses. `board.kind "simulated"` runs the ``SimulatedBoard``
/// (driven through the control socket or the demo keys); `"gpio"` the
/// libgpiod ``GPIOBoard``. In `gpio-step` volume mode one ``AmpStepper`` (the
/// same pulse schedule for both boards) drives the board's UP/DOWN lines.
/// A hardware failure while running stops the speaker with exit code 2.
/// Stops in reverse: amp stepper (both lines inactive), control socket, board.
/// Loop thread only.
public final class BoardService: SpeakerService {
    /// Opens the simulated board's control socket (`board.controlSocket`):
    /// each line received goes to the handler, its answer back; returns the
    /// function that closes the socket. Live: a `LineServer` on the event loop.
    public typealias ControlSocketOpener = (_ path: String, _ handler: @escaping (String) -> String) throws -> () -> Void

    public let name = "board"
    private let config: SpeakerConfig
    private let loop: any EventLoopProtocol
    private let logger: Logger
    private let openControlSocket: ControlSocketOpener
    private let openGPIO: (_ onEdge: @escaping (LineEdge) -> Void, _ onFailure: @escaping (GPIOError) -> Void) throws(GPIOError) -> GPIOBoard
    private weak var context: ServiceContext?
    private var phase: ServicePhase<Running> = .idle

    /// What `start` opened, all of it at once.
    private struct Running {
        /// The one board: simulated or libgpiod.
        var board: RunningBoard
        /// The UP/DOWN pulse driver, only in `gpio-step` volume mode.
        var amp: AmpStepper?
        /// Closes the simulated board's control socket (a no-op without one).
        var closeControlSocket: () -> Void
    }

    private enum RunningBoard {
        case simulated(SimulatedBoard)
        case gpio(GPIOBoard)
    }

    /// The simulated board while it runs (tests read its pulse log).
    public var simulated: SimulatedBoard? {
        guard case .running(let running) = phase, case .simulated(let board) = running.board else { return nil }
        return board
    }

    /// `openGPIO` opens the libgpiod board (`board.kind "gpio"`) with the edge and failure callbacks.
    public init(config: SpeakerConfig, loop: any EventLoopProtocol, logger: Logger,
                openControlSocket: @escaping ControlSocketOpener,
                openGPIO: @escaping (_ onEdge: @escaping (LineEdge) -> Void, _ onFailure: @escaping (GPIOError) -> Void) throws(GPIOError) -> GPIOBoard) {
        self.config = config
        self.loop = loop
        self.logger = logger
        self.openControlSocket = openControlSocket
        self.openGPIO = openGPIO
    }

    public func start(_ context: ServiceContext) throws(StartupError) {
        self.context = context
        let lines: AmpStepLines
        let board: RunningBoard
        var closeControlSocket: () -> Void = {}
        switch config.board.kind {
        case .simulated:
            let simulated = SimulatedBoard(loop: loop, logger: logger.named("board")) { [unowned self] edge in
                self.context?.send(.lineEdge(edge))
            }
            board = .simulated(simulated)
            lines = simulated
            if let path = config.board.controlSocket {
                do {
                    closeControlSocket = try openControlSocket(path) { [unowned simulated] line in simulated.handle(command: line) }
                } catch {
                    throw StartupError(exitCode: 2, message: "board.controlSocket \(path): \(error)")
                }
            }
        case .gpio:
            do {
                let gpio = try openGPIO({ [unowned self] edge in self.context?.send(.lineEdge(edge)) },
                                        { [unowned self] error in self.context?.fail("\(error)", exitCode: 2) })
                board = .gpio(gpio)
                lines = gpio
            } catch {
                throw StartupError(exitCode: error.exitCode, message: error.description)
            }
        }
        var amp: AmpStepper?
        if config.volume.mode == .gpioStep {
            let step = config.volume.gpioStep
            amp = AmpStepper(loop: loop, lines: lines, pulseMilliseconds: step.pulseMs, gapMilliseconds: step.gapMs,
                             maxPending: step.maxPending, logger: logger.named("amp")) { [unowned self] error in
                self.context?.fail("\(error)", exitCode: 2)
            }
        }
        phase = .running(Running(board: board, amp: amp, closeControlSocket: closeControlSocket))
    }

    /// A text command for the simulated board (demo keys); an error with the gpio board.
    public func handle(command: String) -> String {
        simulated?.handle(command: command) ?? "error: the board is not simulated"
    }

    public func perform(_ effect: SpeakerEffect) -> Bool {
        guard case .amp(let pulse) = effect else { return false }
        if case .running(let running) = phase { running.amp?.enqueue(pulse) }
        return true
    }

    public func stop() {
        guard case .running(let running) = phase else { return }
        phase = .stopped
        running.amp?.stop()
        running.closeControlSocket()
        if case .gpio(let gpio) = running.board { gpio.close() }
        context = nil
    }
}
