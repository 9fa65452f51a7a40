// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerCore
import SpeakerSystem
import SpeakerRuntime
import Board

/// The `demo` front end, a service after the board: keys drive the simulated
/// board (space, n, p, ← →, q) and one status line shows the live state on
/// stdout. Stopping restores the terminal.
final class DemoConsole: SpeakerService {
    let name = "demo"
    private let loop: EventLoop
    private let board: SpeakerBoard
    private var keys: TerminalKeys?
    private var lastLine = ""

    init(loop: EventLoop, board: SpeakerBoard) {
        self.loop = loop
        self.board = board
    }

    /// Starts reading keys from the terminal; `q` or end of input stops the speaker.
    func start(_ context: ServiceContext) throws(StartupError) {
        guard isatty(STDIN_FILENO) == 1 else {
            StandardError.write("demo: stdin is not a terminal; drive the board through board.controlSocket instead\n")
            return
        }
        let board = board
        do {
            keys = try TerminalKeys(loop: loop) { [weak context] key in
                switch DemoKeyboard.action(for: key) {
                case .boardCommand(let command)?: _ = board.handle(command: command)
                case .quit?: context?.requestStop("demo: quit")
                case nil: break
                }
            }
        } catch {
            throw StartupError(exitCode: 2, message: "demo: \(error)")
        }
        print(DemoKeyboard.help)
    }

    func observe(_ state: SpeakerState) { show(state, mqttConnected: state.link.mqttConnected) }

    /// Redraws the status line when it changed.
    func show(_ state: SpeakerState, mqttConnected: Bool) {
        let transport = state.transport.session.isPlaying ? "▶ playing" : (state.transport.session.intendsPlayback ? "… starting" : "⏸ paused")
        let volume: String
        switch state.volume.level {
        case .absolute(let level): volume = "volume \(Int((level * 100).rounded()))%"
        case .relative: volume = "volume: step-only amp"
        }
        let audio = state.transport.audio == .ok ? "" : " · audio UNAVAILABLE"
        let line = "\(transport) \(state.transport.selectedSound.name) · \(volume) · MQTT \(mqttConnected ? "connected" : "offline")\(audio)"
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
