#if canImport(Glibc)
import Glibc
#endif
import SpeakerCore
import SpeakerSystem
import Board

/// The `demo` front end: keys drive the simulated board (space, n, p, ← →, q)
/// and one status line shows the live state on stdout.
final class DemoConsole {
    private var keys: TerminalKeys?
    private var lastLine = ""

    /// Starts reading keys from the terminal; `quit` is called on `q` or end of input.
    func start(loop: EventLoop, board: SimulatedBoard, quit: @escaping () -> Void) throws {
        guard isatty(STDIN_FILENO) == 1 else {
            StandardError.write("demo: stdin is not a terminal; drive the board through board.controlSocket instead\n")
            return
        }
        keys = try TerminalKeys(loop: loop) { key in
            switch DemoKeyboard.action(for: key) {
            case .boardCommand(let command)?: _ = board.handle(command: command)
            case .quit?: quit()
            case nil: break
            }
        }
        print(DemoKeyboard.help)
    }

    /// Redraws the status line when it changed.
    func show(_ state: SpeakerState, mqttConnected: Bool) {
        let transport = state.session.isPlaying ? "▶ playing" : (state.session.intendsPlayback ? "… starting" : "⏸ paused")
        let volume: String
        switch state.volume {
        case .absolute(let level): volume = "volume \(Int((level * 100).rounded()))%"
        case .relative: volume = "volume: step-only amp"
        }
        let audio = state.audio == .ok ? "" : " · audio UNAVAILABLE"
        let line = "\(transport) \(state.selectedSound.name) · \(volume) · MQTT \(mqttConnected ? "connected" : "offline")\(audio)"
        guard line != lastLine else { return }
        lastLine = line
        var text = "\r\u{1B}[K" + line
        text.withUTF8 { _ = Glibc.write(STDOUT_FILENO, $0.baseAddress, $0.count) }
    }

    /// Restores the terminal.
    func stop() {
        keys?.restore()
        keys = nil
        print("")
    }
}
