// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
import SpeakerLoop
import SpeakerPorts

/// The board seam: edges into the core as `.lineEdge` actions, `.amp`
/// effects out as pulses, through the board port (``BoardPort``; live: the
/// simulated or libgpiod board `board.kind` names). A hardware failure while
/// running stops the speaker with the failure's exit code. Loop thread only.
public final class BoardService: SpeakerService {
    public let name = "board"
    private let board: any BoardPort
    private weak var context: ServiceContext?
    private var phase: ServicePhase<Void> = .idle

    public init(board: any BoardPort) {
        self.board = board
    }

    public func start(_ context: ServiceContext) throws(StartupError) {
        self.context = context
        do {
            try board.open(onEdge: { [unowned self] edge in self.context?.send(.lineEdge(edge)) },
                           onFailure: { [unowned self] failure in self.context?.fail(failure.message, exitCode: failure.exitCode) })
        } catch {
            throw StartupError(exitCode: error.exitCode, message: error.message)
        }
        phase = .running(())
    }

    /// Pulses for the step-only amplifier (`.amp` effects).
    func perform(_ pulse: AmpPulse) {
        if case .running = phase { board.step(pulse) }
    }

    /// The status LED's pattern (`.statusLed` effects).
    func perform(_ pattern: StatusLedPattern) {
        if case .running = phase { board.showStatus(pattern) }
    }

    public func stop() {
        guard case .running = phase else { return }
        phase = .stopped
        board.close()
        context = nil
    }
}
