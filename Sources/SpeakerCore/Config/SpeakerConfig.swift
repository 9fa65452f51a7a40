// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// The speaker's whole configuration, resolved: every key has a value
/// (config-and-cli.md, "Config file"). Built by `ConfigDecoder`, which
/// validates everything before anything starts. Pure value; any thread.
/// The one place the documented defaults are written: `defaults(hostname:)`
/// and the sections' initial values; `ConfigDecoder` only reads them.
public struct SpeakerConfig: Equatable, Sendable {
    public var device: DeviceSection
    public var board: BoardSection
    public var inputs: InputsSection
    public var audio: AudioSection
    public var volume: VolumeSection
    public var mqtt: MQTTSection
    public var session: SessionSection
    public var clock = ClockSection()
    /// The schedule rules of the config file (`schedules`, default none).
    public var schedules: [ScheduleRule] = []
    public var stateDirectory: String
    /// The sleep timer's defaults.
    public var sleepTimer = SleepTimerSection()
    /// The status LED's output line; nil = no LED.
    public var statusLed: StatusLedLine? = nil
    /// Mixes offered in the catalog after the sounds (`mixes`; default none).
    public var mixes: [MixDefinition] = []

    /// Built-in defaults; `hostname` gives the default device id and name.
    public static func defaults(hostname: String) -> SpeakerConfig {
        let id = DeviceSection.deviceID(fromHostname: hostname)
        return SpeakerConfig(
            device: DeviceSection(id: id, name: DeviceSection.defaultName(id: id)),
            board: BoardSection(kind: .gpio, controlSocket: nil),
            inputs: InputsSection(),
            audio: AudioSection(),
            volume: VolumeSection(),
            mqtt: MQTTSection(),
            session: SessionSection(),
            stateDirectory: "/var/lib/ambient-speaker")
    }

    /// `{prefix}/{deviceId}`: the root of every topic of this speaker.
    public var topicRoot: String { "\(mqtt.prefix)/\(device.id)" }
}

public struct DeviceSection: Equatable, Sendable {
    public var id: String
    public var name: String

    /// The name a device gets when the config gives none: `Ambient speaker (ID)`.
    public static func defaultName(id: String) -> String { "Ambient speaker (\(id))" }

    /// Lower-cases `hostname` and replaces characters outside `[a-z0-9-]` with `-`,
    /// giving a valid device id (`speaker` if nothing usable is left).
    public static func deviceID(fromHostname hostname: String) -> String {
        var chars = hostname.lowercased().unicodeScalars.map { s -> Character in
            (s.isASCII && (("a"..."z").contains(Character(s)) || ("0"..."9").contains(Character(s)) || s == "-"))
                ? Character(s) : "-"
        }
        while chars.first == "-" { chars.removeFirst() }
        let id = String(chars.prefix(63))
        return id.isEmpty ? "speaker" : id
    }

    /// `[a-z0-9][a-z0-9-]{0,62}`.
    public static func isValidID(_ s: String) -> Bool {
        let b = Array(s.utf8)
        func ok(_ c: UInt8, first: Bool) -> Bool {
            (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || (!first && c == 45)
        }
        return (1...63).contains(b.count) && ok(b[0], first: true) && b.dropFirst().allSatisfy { ok($0, first: false) }
    }
}

public struct BoardSection: Equatable, Sendable {
    public enum Kind: String, Equatable, Sendable, CaseIterable { case gpio, simulated }
    public var kind: Kind
    /// Simulated board only: a Unix socket that accepts board commands.
    public var controlSocket: String?
}

/// Pull resistor for an input line.
public enum LineBias: String, Equatable, Sendable, CaseIterable {
    case pullUp = "pull-up", pullDown = "pull-down", disabled = "disabled", asIs = "as-is"
}

/// One push button's line.
public struct ButtonLine: Equatable, Sendable {
    public var line: String
    public var activeLow: Bool = true
    public var bias: LineBias = .pullUp

    public init(line: String, activeLow: Bool = true, bias: LineBias = .pullUp) {
        self.line = line
        self.activeLow = activeLow
        self.bias = bias
    }
}

public struct EncoderLines: Equatable, Sendable {
    /// The documented defaults.
    public init() {}

    public var a: String = "GPIO23"
    public var b: String = "GPIO24"
    public var activeLow: Bool = true
    public var bias: LineBias = .pullUp
    /// Quadrature transitions per detent: 4 (default), 2 or 1.
    public var stepsPerDetent: Int = 4
    /// Fast turns take bigger steps.
    public var acceleration: Bool = true
}

public struct InputsSection: Equatable, Sendable {
    /// The documented defaults.
    public init() {}

    public var playPause = ButtonLine(line: "GPIO17")
    public var next = ButtonLine(line: "GPIO27")
    public var previous = ButtonLine(line: "GPIO22")
    /// nil disables the encoder's push switch.
    public var encoderSwitch: ButtonLine? = ButtonLine(line: "GPIO25")
    public var encoder = EncoderLines()
    public var debounceMs: Int = 30
    public var longPressMs: Int = 800
    /// 0 disables double press (and the wait it costs single presses).
    public var doublePressMs: Int = 0
}

public struct AudioSection: Equatable, Sendable {
    /// The documented defaults.
    public init() {}

    public var device: String = "default"
    public var sampleRate: Int = 48000
    public var periodFrames: Int = 1024
    public var bufferFrames: Int = 4096
    public var soundsDirectory: String = "/var/lib/ambient-speaker/sounds"
    /// The built-in sounds' images (`{id}.png` or `.jpg`), as the package installs them.
    public var artworkDirectory: String = "/usr/share/ambient-speaker/artwork"
    public var fadeMs: Int = 400
    public var crossfadeMs: Int = 1500
    /// KiB of short loops kept decoded (16-bit, output rate) so looping them
    /// costs a copy; 0 streams every file. A 30-s mono loop at 48 kHz takes
    /// 2,813, a stereo one 5,625; the default keeps the speaker within its
    /// 8 MB Pss goal.
    public var loopMemoryKB: Int = 3072
    /// On pause, next/previous/select and a volume change, the audio queued in
    /// the device is taken back (`snd_pcm_rewind`) except this many frames,
    /// which cover re-rendering and the driver's pointer steps; 0 never
    /// rewinds. 256 (5.3 ms at 48 kHz) is enough because the audio thread
    /// rewinds right after a write returned, when the driver's pointer has
    /// just moved.
    public var rewindMarginFrames: Int = 256
}

public struct VolumeSection: Equatable, Sendable {
    /// The documented defaults.
    public init() {}

    public enum Mode: String, Equatable, Sendable, CaseIterable {
        case software, alsaMixer = "alsa-mixer", gpioStep = "gpio-step"
    }
    public struct Mixer: Equatable, Sendable {
        public var card: String = "default"
        public var element: String = "PCM"
    }
    public struct GPIOStep: Equatable, Sendable {
        public var up: String = "GPIO5"
        public var down: String = "GPIO6"
        public var activeLow: Bool = true
        public var pulseMs: Int = 20
        public var gapMs: Int = 20
        public var maxPending: Int = 20
    }
    public var mode: Mode = .software
    public var step: Double = 0.05
    public var initialLevel: Double = 0.4
    public var maxLevel: Double = 1.0
    /// The level at every start: the saved one (`initialLevel` on a fresh
    /// device), or a fixed number.
    public var startupLevel: StartupLevel = .restore
    /// The night cap (`volume.night`), nil = none.
    public var night: NightCap?
    public var mixer = Mixer()
    public var gpioStep = GPIOStep()
}

public struct MQTTSection: Equatable, Sendable {
    /// The documented defaults.
    public init() {}

    public struct TLS: Equatable, Sendable {
        public var caFile: String
        public var certFile: String?
        public var keyFile: String?
    }
    public struct HomeAssistant: Equatable, Sendable {
        public var enabled: Bool = true
        public var prefix: String = "homeassistant"
    }
    public var host: String = "localhost"
    public var port: Int = 1883
    public var prefix: String = "ambient-speaker"
    public var username: String?
    public var passwordFile: String?
    public var tls: TLS?
    public var keepaliveSeconds: Int = 30
    public var homeAssistant = HomeAssistant()
}

public struct SessionSection: Equatable, Sendable {
    /// The documented defaults.
    public init() {}

    public var idleTimeoutSeconds: Int = 1800
    public var resumeOnBoot: Bool = true
}

/// `volume.startupLevel`.
public enum StartupLevel: Equatable, Sendable {
    /// The saved level; `volume.initialLevel` when nothing was saved.
    case restore
    /// This level at every start.
    case fixed(Double)
}

/// `clock`: whether schedules need a synchronised clock, and the time zone.
public struct ClockSection: Equatable, Sendable {
    /// The documented defaults.
    public init() {}

    /// No rule fires while the wall clock is not NTP-synchronised (a board
    /// without an RTC boots at a wrong time); false for a board with an RTC.
    public var requireSync = true
    /// An IANA zone name read from `/usr/share/zoneinfo`, nil = `/etc/localtime`.
    public var timeZone: String?
    /// The zone's rules, read by the host from the zone file (the decoder
    /// leaves UTC; `ConfigLoader` fills it in).
    public var zone = TimeZoneRules.utc
}
