// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// The `sleepTimer` section: the fade a timer uses when its command gives none.
public struct SleepTimerSection: Equatable, Sendable {
    /// The documented defaults.
    public init() {}

    /// Seconds of fade-out before a sleep timer ends (0…1800; default 300).
    public var fadeSeconds: Int = 300
}

/// The status LED's line (`statusLed`): driven high when lit, or low with `activeLow`.
public struct StatusLedLine: Equatable, Sendable {
    public var line: String
    public var activeLow: Bool

    public init(line: String, activeLow: Bool = false) {
        self.line = line
        self.activeLow = activeLow
    }
}

extension ConfigDecoder {
    /// Reads `sleepTimer` and `statusLed` (`null` or absent: no LED).
    func sleepTimerAndLed(_ root: inout ConfigReader, _ config: inout SpeakerConfig) throws(ConfigError) {
        if var r = try root.section("sleepTimer") {
            config.sleepTimer.fadeSeconds = try r.int("fadeSeconds", default: config.sleepTimer.fadeSeconds, in: 0...1800)
            try r.finish()
        }
        if root.raw("statusLed") == .null {
            config.statusLed = nil
        } else if var r = try root.section("statusLed") {
            let line = try r.string("line", default: config.statusLed?.line ?? "GPIO16")
            let activeLow = try r.bool("activeLow", default: config.statusLed?.activeLow ?? false)
            try r.finish()
            config.statusLed = StatusLedLine(line: line, activeLow: activeLow)
        }
    }
}
