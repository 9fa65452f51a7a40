// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// The listening session as the core tracks it.
public struct SessionState: Equatable, Sendable {
    /// Current or last session id; nil if there never was one.
    public var id: String?
    /// False before the first play and after an end (`ended: true`).
    public var isActive = false
    /// What the listener wants.
    public var intendsPlayback = false
    /// What the engine reported last (truth, not request).
    public var isPlaying = false
    /// When playback intent last became false, for the idle timeout.
    public var pausedSince: MonotonicInstant?
}

/// The transport domain: which sound is selected, the session, whether the
/// output works, and the engine requests not yet reported. Its reducer is in
/// `TransportState+Reduce`.
public struct TransportState: Equatable, Sendable {
    /// The sounds in playback order (at least one).
    public var catalog: [CatalogEntry]
    public var selectedIndex: Int
    public var session = SessionState()
    public var audio: AudioStatus = .ok
    /// Total underruns the engine recovered from.
    public var underruns = 0
    /// Engine tickets not yet reported, with the command (if any) that asked.
    var outstanding: [UInt64: PendingCommand?] = [:]

    init(catalog: [CatalogEntry], selectedIndex: Int) {
        self.catalog = catalog
        self.selectedIndex = catalog.indices.contains(selectedIndex) ? selectedIndex : 0
    }

    /// Replaces the catalog (the mixes changed), keeping the selected entry
    /// selected; it must still be in `entries`.
    mutating func replaceCatalog(_ entries: [CatalogEntry]) {
        let id = selectedSound.id
        catalog = entries
        selectedIndex = entries.firstIndex { $0.id == id } ?? 0
    }

    /// The selected catalog entry.
    public var selectedSound: CatalogEntry { catalog[selectedIndex] }

    /// When a paused session ends by itself.
    func idleDeadline(timeoutSeconds: Int) -> MonotonicInstant? {
        guard session.isActive, !session.intendsPlayback, let since = session.pausedSince else { return nil }
        return since.advanced(byMilliseconds: timeoutSeconds * 1000)
    }
}

/// What the transport reducer needs from outside its state.
struct TransportContext {
    var fadeMs: Int
    var crossfadeMs: Int
    var newSessionID: () -> String
}

/// A transport command (the play/pause/select half of `Command`).
enum TransportCommand: Equatable {
    case play, pause, toggle, stop, next, previous
    case select(soundID: String)
}

/// One transport reduction: its effects in order, the command's outcome, and
/// the commands the engine's report completed (their results wait for the
/// publication that shows the change).
struct TransportStep {
    var effects: [SpeakerEffect] = []
    var outcome = ApplyOutcome.done(level: nil)
    var completed: [PendingCommand] = []
}
