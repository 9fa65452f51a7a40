// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// Parses and validates a config file into a `SpeakerConfig`. Every error
/// names the key path and what was expected; unknown keys are errors; a line
/// used twice, MQTT wildcards in a prefix or id, and inconsistent values are
/// caught here, before anything starts. Checks that need the file system
/// (is the password file world-readable?) happen in the executable.
/// Defaults live only in `SpeakerConfig` (its sections' initial values): every
/// key absent from the file keeps the value `SpeakerConfig.defaults` gave it.
public struct ConfigDecoder: Sendable {
    public let hostname: String

    public init(hostname: String) { self.hostname = hostname }

    /// Decodes a config file's bytes (an empty object gives the defaults).
    public func decode(_ bytes: [UInt8]) throws(ConfigError) -> SpeakerConfig {
        let value: JSONValue
        do {
            value = try JSONParser(maxDepth: 16).parse(bytes)
        } catch {
            throw ConfigError(path: "(file)", message: "not valid JSON: \(error)")
        }
        return try decode(value)
    }

    public func decode(_ value: JSONValue) throws(ConfigError) -> SpeakerConfig {
        var config = SpeakerConfig.defaults(hostname: hostname)
        var root = try ConfigReader(value, path: "")
        if var r = try root.section("device") {
            config.device.id = try r.string("id", default: config.device.id)
            guard DeviceSection.isValidID(config.device.id) else {
                throw r.fail("id", "must match [a-z0-9][a-z0-9-]{0,62}, got \(JSONValue.string(config.device.id).jsonText)")
            }
            config.device.name = try r.string("name", default: DeviceSection.defaultName(id: config.device.id))
            try r.finish()
        }
        if var r = try root.section("board") {
            config.board.kind = try r.choice("kind", default: config.board.kind)
            config.board.controlSocket = try r.optionalString("controlSocket", default: config.board.controlSocket)
            if config.board.controlSocket != nil && config.board.kind != .simulated {
                throw r.fail("controlSocket", "only a simulated board has a control socket (board.kind is \"\(config.board.kind.rawValue)\")")
            }
            try r.finish()
        }
        if var r = try root.section("inputs") { config.inputs = try inputs(&r, config.inputs) }
        if var r = try root.section("audio") { config.audio = try audio(&r, config.audio) }
        if var r = try root.section("volume") { config.volume = try volume(&r, config.volume) }
        if var r = try root.section("mqtt") { config.mqtt = try mqtt(&r, config.mqtt) }
        if var r = try root.section("session") {
            config.session.idleTimeoutSeconds = try r.int("idleTimeoutSeconds", default: config.session.idleTimeoutSeconds, in: 1...604_800)
            config.session.resumeOnBoot = try r.bool("resumeOnBoot", default: config.session.resumeOnBoot)
            try r.finish()
        }
        if var r = try root.section("clock") {
            config.clock.requireSync = try r.bool("requireSync", default: config.clock.requireSync)
            config.clock.timeZone = try r.optionalString("timeZone", default: config.clock.timeZone)
            if let name = config.clock.timeZone, !Self.isZoneName(name) {
                throw r.fail("timeZone", "expected an IANA zone name such as \"Europe/Berlin\", got \(JSONValue.string(name).jsonText)")
            }
            try r.finish()
        }
        if let raw = root.raw("schedules") {
            config.schedules = try ScheduleRule.parseList(raw, path: "schedules", relativeVolume: config.volume.mode == .gpioStep)
        }
        config.stateDirectory = try root.string("stateDirectory", default: config.stateDirectory)
        try sleepTimerAndLed(&root, &config)
        if let raw = root.raw("mixes") { config.mixes = try Self.mixes(raw) }
        try root.finish()
        try checkLinesUnique(config)
        return config
    }

    private func button(_ r: inout ConfigReader, key: String, _ current: ButtonLine) throws(ConfigError) -> ButtonLine {
        guard var b = try r.section(key) else { return current }
        var line = current
        line.line = try b.string("line", default: current.line)
        line.activeLow = try b.bool("activeLow", default: current.activeLow)
        line.bias = try b.choice("bias", default: current.bias)
        try b.finish()
        return line
    }

    private func inputs(_ r: inout ConfigReader, _ current: InputsSection) throws(ConfigError) -> InputsSection {
        var s = current
        s.playPause = try button(&r, key: "playPause", s.playPause)
        s.next = try button(&r, key: "next", s.next)
        s.previous = try button(&r, key: "previous", s.previous)
        if r.raw("encoderSwitch") == .null {
            s.encoderSwitch = nil
        } else if let sw = s.encoderSwitch {
            s.encoderSwitch = try button(&r, key: "encoderSwitch", sw)
        }
        if var e = try r.section("encoder") {
            s.encoder.a = try e.string("a", default: s.encoder.a)
            s.encoder.b = try e.string("b", default: s.encoder.b)
            s.encoder.activeLow = try e.bool("activeLow", default: s.encoder.activeLow)
            s.encoder.bias = try e.choice("bias", default: s.encoder.bias)
            s.encoder.stepsPerDetent = try e.int("stepsPerDetent", default: s.encoder.stepsPerDetent, in: 1...4)
            guard [1, 2, 4].contains(s.encoder.stepsPerDetent) else {
                throw e.fail("stepsPerDetent", "must be 1, 2 or 4, got \(s.encoder.stepsPerDetent)")
            }
            s.encoder.acceleration = try e.bool("acceleration", default: s.encoder.acceleration)
            try e.finish()
        }
        s.debounceMs = try r.int("debounceMs", default: s.debounceMs, in: 0...500)
        s.longPressMs = try r.int("longPressMs", default: s.longPressMs, in: 100...10_000)
        s.doublePressMs = try r.int("doublePressMs", default: s.doublePressMs, in: 0...2_000)
        if s.longPressMs <= s.debounceMs {
            throw r.fail("longPressMs", "must be longer than inputs.debounceMs (\(s.debounceMs)), got \(s.longPressMs)")
        }
        try r.finish()
        return s
    }

    private func audio(_ r: inout ConfigReader, _ current: AudioSection) throws(ConfigError) -> AudioSection {
        var s = current
        s.device = try r.string("device", default: s.device)
        s.sampleRate = try r.int("sampleRate", default: s.sampleRate, in: 8000...192_000)
        s.periodFrames = try r.int("periodFrames", default: s.periodFrames, in: 32...16_384)
        s.bufferFrames = try r.int("bufferFrames", default: s.bufferFrames, in: 64...131_072)
        if s.bufferFrames < 2 * s.periodFrames {
            throw r.fail("bufferFrames", "must be at least twice audio.periodFrames (\(2 * s.periodFrames)), got \(s.bufferFrames)")
        }
        s.soundsDirectory = try r.string("soundsDirectory", default: s.soundsDirectory)
        s.artworkDirectory = try r.string("artworkDirectory", default: s.artworkDirectory)
        s.fadeMs = try r.int("fadeMs", default: s.fadeMs, in: 0...10_000)
        s.crossfadeMs = try r.int("crossfadeMs", default: s.crossfadeMs, in: 0...30_000)
        s.loopMemoryKB = try r.int("loopMemoryKB", default: s.loopMemoryKB, in: 0...1_048_576)
        s.rewindMarginFrames = try r.int("rewindMarginFrames", default: s.rewindMarginFrames, in: 0...131_072)
        if s.rewindMarginFrames >= s.bufferFrames {
            throw r.fail("rewindMarginFrames", "must be below audio.bufferFrames (\(s.bufferFrames)), got \(s.rewindMarginFrames)")
        }
        try r.finish()
        return s
    }

    private func volume(_ r: inout ConfigReader, _ current: VolumeSection) throws(ConfigError) -> VolumeSection {
        var s = current
        s.mode = try r.choice("mode", default: s.mode)
        s.step = try r.double("step", default: s.step, in: 0...0.5, excludingLower: true)
        s.maxLevel = try r.double("maxLevel", default: s.maxLevel, in: 0...1, excludingLower: true)
        s.initialLevel = try r.double("initialLevel", default: min(s.initialLevel, s.maxLevel), in: 0...1)
        if s.initialLevel > s.maxLevel {
            throw r.fail("initialLevel", "must not exceed volume.maxLevel (\(JSONValue.number(s.maxLevel).jsonText)), got \(JSONValue.number(s.initialLevel).jsonText)")
        }
        if let raw = r.raw("startupLevel") {
            if raw.stringValue == "restore" {
                s.startupLevel = .restore
            } else if let n = raw.numberValue, n.isFinite {
                guard n >= 0, n <= s.maxLevel else {
                    throw r.fail("startupLevel", "must be \"restore\" or a number in [0, \(JSONValue.number(s.maxLevel).jsonText)] (volume.maxLevel), got \(ConfigReader.show(raw))")
                }
                s.startupLevel = .fixed(VolumeControlState.tidy(n))
            } else {
                throw r.fail("startupLevel", "expected \"restore\" or a number in [0, \(JSONValue.number(s.maxLevel).jsonText)], got \(ConfigReader.show(raw))")
            }
        }
        if let raw = r.raw("night") {
            s.night = try NightCap.parse(raw, path: r.keyPath("night"), volumeMaxLevel: s.maxLevel, relativeVolume: s.mode == .gpioStep)
        }
        if var m = try r.section("mixer") {
            s.mixer.card = try m.string("card", default: s.mixer.card)
            s.mixer.element = try m.string("element", default: s.mixer.element)
            try m.finish()
        }
        if var g = try r.section("gpioStep") {
            s.gpioStep.up = try g.string("up", default: s.gpioStep.up)
            s.gpioStep.down = try g.string("down", default: s.gpioStep.down)
            s.gpioStep.activeLow = try g.bool("activeLow", default: s.gpioStep.activeLow)
            s.gpioStep.pulseMs = try g.int("pulseMs", default: s.gpioStep.pulseMs, in: 1...1000)
            s.gpioStep.gapMs = try g.int("gapMs", default: s.gpioStep.gapMs, in: 1...1000)
            s.gpioStep.maxPending = try g.int("maxPending", default: s.gpioStep.maxPending, in: 1...1000)
            try g.finish()
        }
        if s.mode == .gpioStep, case .fixed = s.startupLevel {
            throw r.fail("startupLevel", "volume.mode gpio-step has no level to start at; use \"restore\"")
        }
        try r.finish()
        return s
    }

    /// `Area/City[/More]` or a single name like `UTC`: letters, digits, `_+-`, one dot-free path.
    static func isZoneName(_ name: String) -> Bool {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        return name.utf8.count <= 64 && parts.allSatisfy { part in
            !part.isEmpty && part != "." && part != ".." && part.utf8.allSatisfy { c in
                (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c == 95 || c == 43 || c == 45
            }
        }
    }

    private func mqtt(_ r: inout ConfigReader, _ current: MQTTSection) throws(ConfigError) -> MQTTSection {
        var s = current
        s.host = try r.string("host", default: s.host)
        s.port = try r.int("port", default: s.port, in: 1...65_535)
        s.prefix = try r.string("prefix", default: s.prefix)
        if let problem = Self.topicProblem(s.prefix) { throw r.fail("prefix", problem) }
        s.username = try r.optionalString("username", default: s.username)
        s.passwordFile = try r.optionalString("passwordFile", default: s.passwordFile)
        if r.raw("tls") == .null {
            s.tls = nil
        } else if var t = try r.section("tls") {
            let ca = try t.string("caFile", default: "")
            guard !ca.isEmpty else { throw t.fail("caFile", "required when mqtt.tls is set") }
            let cert = try t.optionalString("certFile", default: nil)
            let key = try t.optionalString("keyFile", default: nil)
            if (cert == nil) != (key == nil) {
                throw t.fail(cert == nil ? "certFile" : "keyFile", "certFile and keyFile go together")
            }
            try t.finish()
            s.tls = .init(caFile: ca, certFile: cert, keyFile: key)
        }
        s.keepaliveSeconds = try r.int("keepaliveSeconds", default: s.keepaliveSeconds, in: 5...3600)
        if var h = try r.section("homeAssistant") {
            s.homeAssistant.enabled = try h.bool("enabled", default: s.homeAssistant.enabled)
            s.homeAssistant.prefix = try h.string("prefix", default: s.homeAssistant.prefix)
            if let problem = Self.topicProblem(s.homeAssistant.prefix) { throw h.fail("prefix", problem) }
            try h.finish()
        }
        try r.finish()
        return s
    }

    /// Why `topic` cannot be a topic prefix (wildcards, NUL, empty levels), or nil.
    static func topicProblem(_ topic: String) -> String? {
        if topic.contains("+") || topic.contains("#") { return "must not contain the MQTT wildcards + or #, got \(JSONValue.string(topic).jsonText)" }
        if topic.unicodeScalars.contains("\u{0}") { return "must not contain NUL" }
        if topic.split(separator: "/", omittingEmptySubsequences: false).contains(where: \.isEmpty) {
            return "must not have empty levels (leading, trailing or double '/'), got \(JSONValue.string(topic).jsonText)"
        }
        return nil
    }

    /// Every GPIO line may serve one purpose only.
    private func checkLinesUnique(_ c: SpeakerConfig) throws(ConfigError) {
        var uses: [(path: String, line: String)] = [
            ("inputs.playPause.line", c.inputs.playPause.line), ("inputs.next.line", c.inputs.next.line),
            ("inputs.previous.line", c.inputs.previous.line),
            ("inputs.encoder.a", c.inputs.encoder.a), ("inputs.encoder.b", c.inputs.encoder.b),
        ]
        if let sw = c.inputs.encoderSwitch { uses.append(("inputs.encoderSwitch.line", sw.line)) }
        if let led = c.statusLed { uses.append(("statusLed.line", led.line)) }
        if c.volume.mode == .gpioStep {
            uses.append(("volume.gpioStep.up", c.volume.gpioStep.up))
            uses.append(("volume.gpioStep.down", c.volume.gpioStep.down))
        }
        var seen: [String: String] = [:]
        for use in uses {
            if let first = seen[use.line] {
                throw ConfigError(path: use.path, message: "line \(use.line) is already used by \(first)")
            }
            seen[use.line] = use.path
        }
    }
}
