// SPDX-License-Identifier: Apache-2.0
import SpeakerCore

/// Where the persisted state (last sound, level, playback intent) is kept,
/// as the persistence service writes it; live: `state.json`, written
/// atomically (SpeakerHost). The core decides when to write. Loop thread only.
public protocol StateStorage: AnyObject {
    /// Logs where the state lives and how often it may be written (once, at start).
    func logConfiguration(resumeOnBoot: Bool)
    /// Writes `state` durably; a failure is logged (the next change retries).
    func save(_ state: PersistedState)
}

/// Where the mixes changed over MQTT are kept (`SavedMixes`); live:
/// `mixes.json`, written atomically (SpeakerHost). Loop thread only.
public protocol MixStorage: AnyObject {
    /// Writes `mixes` durably; a failure is logged (the next change retries).
    func save(_ mixes: SavedMixes)
}

/// Where the command journal is kept (`CommandJournal`); live:
/// `commands.json`, written atomically (SpeakerHost). Loop thread only.
public protocol CommandJournalStorage: AnyObject {
    /// Writes `journal` durably before returning (the core has ordered the
    /// acknowledgements and results after it); a failure is logged.
    func save(_ journal: CommandJournal)
}

/// Where the session revision reservation is kept (see `RevisionCounter`);
/// live: the `revision` file, written atomically (SpeakerHost). Loop thread only.
public protocol RevisionStorage: AnyObject {
    /// Durably records that revisions up to `through` may be used, before
    /// any is; returns nil when it is on disk, else the reason it is not.
    func reserve(through: UInt64) -> String?
}

/// How the speaker talks to systemd (`Type=notify`): readiness, the
/// watchdog, `STATUS=` and the reload and stop notices, each one message;
/// live: `$NOTIFY_SOCKET` (SpeakerHost). Without a notify socket every
/// message goes nowhere. Loop thread only.
public protocol SystemdNotify: AnyObject {
    /// Whether systemd listens.
    var isActive: Bool { get }
    /// How often to ping the watchdog (half of `$WATCHDOG_USEC`), in
    /// milliseconds; nil when the watchdog is off.
    var watchdogPingMs: Int? { get }
    /// Logs how the service talks to systemd (once, at start).
    func logConfiguration()
    /// Sends one notification (`READY=1\nSTATUS=…`); a failure is logged.
    func notify(_ message: String)
}
