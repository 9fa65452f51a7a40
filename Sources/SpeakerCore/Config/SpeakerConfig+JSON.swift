// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

extension SpeakerConfig {
    /// The resolved configuration as JSON in the config file's own shape, so
    /// `check-config` prints something that can be fed back as a config file.
    /// Holds paths only (never a password).
    public var json: JSONValue {
        func str(_ s: String?) -> JSONValue { s.map { .string($0) } ?? .null }
        func num(_ n: Int) -> JSONValue { .number(Double(n)) }
        func button(_ b: ButtonLine) -> JSONValue {
            .object([("line", .string(b.line)), ("activeLow", .bool(b.activeLow)), ("bias", .string(b.bias.rawValue))])
        }
        let e = inputs.encoder
        let g = volume.gpioStep
        return .object([
            ("device", .object([("id", .string(device.id)), ("name", .string(device.name))])),
            ("board", .object([("kind", .string(board.kind.rawValue)), ("controlSocket", str(board.controlSocket))])),
            ("inputs", .object([
                ("playPause", button(inputs.playPause)), ("next", button(inputs.next)),
                ("previous", button(inputs.previous)), ("encoderSwitch", inputs.encoderSwitch.map(button) ?? .null),
                ("encoder", .object([
                    ("a", .string(e.a)), ("b", .string(e.b)), ("activeLow", .bool(e.activeLow)),
                    ("bias", .string(e.bias.rawValue)), ("stepsPerDetent", num(e.stepsPerDetent)),
                    ("acceleration", .bool(e.acceleration)),
                ])),
                ("debounceMs", num(inputs.debounceMs)), ("longPressMs", num(inputs.longPressMs)),
                ("doublePressMs", num(inputs.doublePressMs)),
            ])),
            ("audio", .object([
                ("device", .string(audio.device)), ("sampleRate", num(audio.sampleRate)),
                ("periodFrames", num(audio.periodFrames)), ("bufferFrames", num(audio.bufferFrames)),
                ("soundsDirectory", .string(audio.soundsDirectory)),
                ("artworkDirectory", .string(audio.artworkDirectory)), ("fadeMs", num(audio.fadeMs)),
                ("crossfadeMs", num(audio.crossfadeMs)), ("loopMemoryKB", num(audio.loopMemoryKB)),
                ("rewindMarginFrames", num(audio.rewindMarginFrames)),
            ])),
            ("volume", .object([
                ("mode", .string(volume.mode.rawValue)), ("step", .number(volume.step)),
                ("initialLevel", .number(volume.initialLevel)), ("maxLevel", .number(volume.maxLevel)),
                ("startupLevel", { if case .fixed(let l) = volume.startupLevel { return .number(l) } else { return .string("restore") } }()),
                ("night", volume.night?.json(active: nil) ?? .null),
                ("mixer", .object([("card", .string(volume.mixer.card)), ("element", .string(volume.mixer.element))])),
                ("gpioStep", .object([
                    ("up", .string(g.up)), ("down", .string(g.down)), ("activeLow", .bool(g.activeLow)),
                    ("pulseMs", num(g.pulseMs)), ("gapMs", num(g.gapMs)), ("maxPending", num(g.maxPending)),
                ])),
            ])),
            ("mqtt", .object([
                ("host", .string(mqtt.host)), ("port", num(mqtt.port)), ("prefix", .string(mqtt.prefix)),
                ("username", str(mqtt.username)), ("passwordFile", str(mqtt.passwordFile)),
                ("tls", mqtt.tls.map { .object([("caFile", .string($0.caFile)), ("certFile", str($0.certFile)),
                                                 ("keyFile", str($0.keyFile))]) } ?? .null),
                ("keepaliveSeconds", num(mqtt.keepaliveSeconds)),
                ("homeAssistant", .object([("enabled", .bool(mqtt.homeAssistant.enabled)),
                                           ("prefix", .string(mqtt.homeAssistant.prefix))])),
            ])),
            ("session", .object([("idleTimeoutSeconds", num(session.idleTimeoutSeconds)),
                                 ("resumeOnBoot", .bool(session.resumeOnBoot))])),
            ("clock", .object([("requireSync", .bool(clock.requireSync)), ("timeZone", str(clock.timeZone))])),
            ("schedules", ScheduleRule.json(schedules)),
            ("stateDirectory", .string(stateDirectory)),
            ("sleepTimer", .object([("fadeSeconds", num(sleepTimer.fadeSeconds))])),
            ("statusLed", statusLed.map { .object([("line", .string($0.line)), ("activeLow", .bool($0.activeLow))]) } ?? .null),
            ("mixes", .array(mixes.map(\.json))),
        ])
    }
}
