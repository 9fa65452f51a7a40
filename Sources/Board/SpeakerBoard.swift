// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
import SpeakerSystem
import SpeakerPorts

/// The board port's live board: `board.kind "simulated"` runs the
/// ``SimulatedBoard`` (driven through the control socket or the demo keys);
/// `"gpio"` the libgpiod ``GPIOBoard``. In `gpio-step` volume mode one
/// ``AmpStepper`` (the same pulse schedule for both boards) drives the
/// board's UP/DOWN lines. Closes in reverse: amp stepper (both lines
/// inactive), control socket, board. Loop thread only.
public final class SpeakerBoard: BoardPort {
    /// Opens the simulated board's control socket (`board.controlSocket`):
    /// each line received goes to the handler, its answer back; returns the
    /// function that closes the socket. Live: a `LineServer` on the event loop.
    public typealias ControlSocketOpener = (_ path: String, _ handler: @escaping (String) -> String) throws -> () -> Void
    /// Opens the libgpiod board (`board.kind "gpio"`) with the edge and failure callbacks.
    public typealias GPIOOpener = (_ onEdge: @escaping (LineEdge) -> Void, _ onFailure: @escaping (GPIOError) -> Void) throws(GPIOError) -> GPIOBoard

    private let config: SpeakerConfig
    private let loop: any EventLoopProtocol
    private let logger: Logger
    private let openControlSocket: ControlSocketOpener
    private let openGPIO: GPIOOpener
    /// The simulated board's wall clock (its `clock` commands), if any.
    private let simulatedClock: SimulatedWallClock?
    private var phase: Phase = .closed

    private enum Phase {
        case closed
        case open(Opened)
    }

    /// What `open` opened, all of it at once.
    private struct Opened {
        /// The one board: simulated or libgpiod.
        var board: OpenBoard
        /// The UP/DOWN pulse driver, only in `gpio-step` volume mode.
        var amp: AmpStepper?
        /// The status LED's pattern player, only with `statusLed`.
        var led: StatusLedDriver?
        /// Closes the simulated board's control socket (a no-op without one).
        var closeControlSocket: () -> Void
    }

    private enum OpenBoard {
        case simulated(SimulatedBoard)
        case gpio(GPIOBoard)
    }

    /// The simulated board while it is open (tests read its pulse log).
    public var simulated: SimulatedBoard? {
        guard case .open(let opened) = phase, case .simulated(let board) = opened.board else { return nil }
        return board
    }

    public init(config: SpeakerConfig, loop: any EventLoopProtocol, logger: Logger,
                openControlSocket: @escaping ControlSocketOpener, openGPIO: @escaping GPIOOpener,
                simulatedClock: SimulatedWallClock? = nil) {
        self.config = config
        self.simulatedClock = simulatedClock
        self.loop = loop
        self.logger = logger
        self.openControlSocket = openControlSocket
        self.openGPIO = openGPIO
    }

    public func open(onEdge: @escaping (LineEdge) -> Void, onFailure: @escaping (BoardFailure) -> Void) throws(BoardFailure) {
        let lines: AmpStepLines & StatusLedLines
        let board: OpenBoard
        var closeControlSocket: () -> Void = {}
        switch config.board.kind {
        case .simulated:
            let simulated = SimulatedBoard(loop: loop, logger: logger.named("board"), clock: simulatedClock, onEdge: onEdge)
            board = .simulated(simulated)
            lines = simulated
            if let path = config.board.controlSocket {
                do {
                    closeControlSocket = try openControlSocket(path) { [unowned simulated] line in simulated.handle(command: line) }
                } catch {
                    throw BoardFailure(exitCode: 2, message: "board.controlSocket \(path): \(error)")
                }
            }
        case .gpio:
            do {
                let gpio = try openGPIO(onEdge, { error in onFailure(BoardFailure(exitCode: 2, message: "\(error)")) })
                board = .gpio(gpio)
                lines = gpio
            } catch {
                throw BoardFailure(exitCode: error.exitCode, message: error.description)
            }
        }
        var amp: AmpStepper?
        if config.volume.mode == .gpioStep {
            let step = config.volume.gpioStep
            amp = AmpStepper(loop: loop, lines: lines, pulseMilliseconds: step.pulseMs, gapMilliseconds: step.gapMs,
                             maxPending: step.maxPending, logger: logger.named("amp")) { error in
                onFailure(BoardFailure(exitCode: 2, message: "\(error)"))
            }
        }
        var led: StatusLedDriver?
        if config.statusLed != nil {
            led = StatusLedDriver(loop: loop, lines: lines) { error in onFailure(BoardFailure(exitCode: 2, message: "\(error)")) }
        }
        phase = .open(Opened(board: board, amp: amp, led: led, closeControlSocket: closeControlSocket))
    }

    /// A text command for the simulated board (demo keys); an error with the gpio board.
    public func handle(command: String) -> String {
        simulated?.handle(command: command) ?? "error: the board is not simulated"
    }

    public func step(_ pulse: AmpPulse) {
        if case .open(let opened) = phase { opened.amp?.enqueue(pulse) }
    }

    public func showStatus(_ pattern: StatusLedPattern) {
        if case .open(let opened) = phase { opened.led?.show(pattern) }
    }

    public func close() {
        guard case .open(let opened) = phase else { return }
        phase = .closed
        opened.amp?.stop()
        opened.led?.stop()
        opened.closeControlSocket()
        if case .gpio(let gpio) = opened.board { gpio.close() }
    }
}
