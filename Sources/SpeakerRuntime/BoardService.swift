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
    /// The running board: exactly one of these after start.
    public private(set) var simulated: SimulatedBoard?
    private var gpio: GPIOBoard?
    private var amp: AmpStepper?
    private var closeControlSocket: () -> Void = {}

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
        switch config.board.kind {
        case .simulated:
            let board = SimulatedBoard(loop: loop, logger: logger.named("board")) { [unowned self] edge in
                self.context?.send(.lineEdge(edge))
            }
            simulated = board
            lines = board
            if let path = config.board.controlSocket {
                do {
                    closeControlSocket = try openControlSocket(path) { [unowned board] line in board.handle(command: line) }
                } catch {
                    throw StartupError(exitCode: 2, message: "board.controlSocket \(path): \(error)")
                }
            }
        case .gpio:
            do {
                let board = try openGPIO({ [unowned self] edge in self.context?.send(.lineEdge(edge)) },
                                         { [unowned self] error in self.context?.fail("\(error)", exitCode: 2) })
                gpio = board
                lines = board
            } catch {
                throw StartupError(exitCode: error.exitCode, message: error.description)
            }
        }
        if config.volume.mode == .gpioStep {
            let step = config.volume.gpioStep
            amp = AmpStepper(loop: loop, lines: lines, pulseMilliseconds: step.pulseMs, gapMilliseconds: step.gapMs,
                             maxPending: step.maxPending, logger: logger.named("amp")) { [unowned self] error in
                self.context?.fail("\(error)", exitCode: 2)
            }
        }
    }

    /// A text command for the simulated board (demo keys); an error with the gpio board.
    public func handle(command: String) -> String {
        simulated?.handle(command: command) ?? "error: the board is not simulated"
    }

    public func perform(_ effect: SpeakerEffect) -> Bool {
        guard case .amp(let pulse) = effect else { return false }
        amp?.enqueue(pulse)
        return true
    }

    public func stop() {
        amp?.stop()
        amp = nil
        closeControlSocket()
        closeControlSocket = {}
        gpio?.close()
        gpio = nil
        simulated = nil
        context = nil
    }
}
