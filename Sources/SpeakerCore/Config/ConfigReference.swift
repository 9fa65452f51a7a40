// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// The configuration reference: one line per key of the config file, beside
/// the decoder that reads them. `docs/configuration.md` is rendered from it
/// (`ambient-speaker config-reference`), with each default taken from
/// `SpeakerConfig.defaults` (so a default is written only there), and CI checks
/// that the checked-in file matches and that every key of the model is here.
public enum ConfigReference {
    /// One documented key: its dotted path (`[]` marks an array's elements),
    /// what values it takes, and what it does.
    public struct Key: Sendable {
        public let path: String
        public let values: String
        public let meaning: String
    }

    /// Every key, in the order of the file's sections.
    public static let keys: [Key] = [
        Key(path: "device.id", values: "`[a-z0-9][a-z0-9-]{0,62}`",
            meaning: "The topic level `{prefix}/{id}/…`. Default: the host name, lower-cased, other characters turned into `-`."),
        Key(path: "device.name", values: "string", meaning: "The name shown to people. Default: `Ambient speaker (<id>)`."),
        Key(path: "board.kind", values: "`gpio`, `simulated`", meaning: "Real GPIO lines (libgpiod) or a simulated board (tests, `demo`)."),
        Key(path: "board.controlSocket", values: "path or `null`", meaning: "Simulated board only: a Unix socket that takes board commands (press, turn, and clock, which moves the simulated board's own wall clock)."),
        Key(path: "inputs.playPause", values: "button", meaning: "The play/pause button. A button is `{\"line\", \"activeLow\", \"bias\"}`."),
        Key(path: "inputs.next", values: "button", meaning: "The next-sound button."),
        Key(path: "inputs.previous", values: "button", meaning: "The previous-sound button."),
        Key(path: "inputs.encoderSwitch", values: "button or `null`", meaning: "The knob's push switch; `null` when the knob has none."),
        Key(path: "inputs.*.line", values: "line name", meaning: "A GPIO line by name (`GPIO17`) or `chip:offset`; each line may serve one purpose only."),
        Key(path: "inputs.*.activeLow", values: "boolean", meaning: "The contact pulls the line low when pressed."),
        Key(path: "inputs.*.bias", values: "`pull-up`, `pull-down`, `disabled`, `as-is`", meaning: "The line's internal bias."),
        Key(path: "inputs.encoder.a", values: "line name", meaning: "The knob's A (CLK) line."),
        Key(path: "inputs.encoder.b", values: "line name", meaning: "The knob's B (DT) line."),
        Key(path: "inputs.encoder.activeLow", values: "boolean", meaning: "The encoder's contacts close to ground."),
        Key(path: "inputs.encoder.bias", values: "`pull-up`, `pull-down`, `disabled`, `as-is`", meaning: "Bias of both encoder lines."),
        Key(path: "inputs.encoder.stepsPerDetent", values: "1, 2 or 4", meaning: "Quadrature steps per click of the knob."),
        Key(path: "inputs.encoder.acceleration", values: "boolean", meaning: "Fast turns move the volume further per click."),
        Key(path: "inputs.debounceMs", values: "0–500", meaning: "A contact must stay put this long to count."),
        Key(path: "inputs.longPressMs", values: "100–10000, above `debounceMs`", meaning: "Held this long, a press is a long press."),
        Key(path: "inputs.doublePressMs", values: "0–2000", meaning: "Two presses within this are a double press; 0 turns double presses off."),
        Key(path: "audio.device", values: "ALSA pcm name", meaning: "Where the sound goes, e.g. `hw:CARD=sndrpihifiberry` for a DAC hat; `ambient-speaker devices` lists the cards."),
        Key(path: "audio.sampleRate", values: "8000–192000", meaning: "Output rate in Hz; sound files are resampled to it."),
        Key(path: "audio.periodFrames", values: "32–16384", meaning: "ALSA period size in frames."),
        Key(path: "audio.bufferFrames", values: "64–131072, at least 2 periods", meaning: "ALSA buffer size in frames."),
        Key(path: "audio.soundsDirectory", values: "path", meaning: "Sound files (WAV, FLAC, Ogg…) added to the catalog beside the built-in sounds; `NAME.png` or `NAME.jpg` beside `NAME.flac` is its artwork."),
        Key(path: "audio.artworkDirectory", values: "path", meaning: "The built-in sounds' artwork (`rain.png`…), published on `artwork/{id}`; the package installs one per built-in sound."),
        Key(path: "audio.fadeMs", values: "0–10000", meaning: "Fade on play and pause."),
        Key(path: "audio.crossfadeMs", values: "0–30000", meaning: "Crossfade when the sound changes."),
        Key(path: "audio.loopMemoryKB", values: "0–1048576", meaning: "Memory for short loops kept decoded (16-bit at the output rate); 0 streams every file."),
        Key(path: "audio.rewindMarginFrames", values: "0–131072, below `bufferFrames`",
            meaning: "On a change (pause, next, volume) the audio queued in the device is taken back except this many frames and rendered again; 0 never rewinds."),
        Key(path: "volume.mode", values: "`software`, `alsa-mixer`, `gpio-step`",
            meaning: "`software` and `alsa-mixer` are absolute (a level 0–1); `gpio-step` is relative (pulses to an amplifier's up/down inputs)."),
        Key(path: "volume.step", values: "(0, 0.5]", meaning: "Level change per knob click or `volumeUp` step."),
        Key(path: "volume.initialLevel", values: "[0, `maxLevel`]", meaning: "The level of a fresh device."),
        Key(path: "volume.maxLevel", values: "(0, 1]", meaning: "The highest level anything may set."),
        Key(path: "volume.startupLevel", values: "`\"restore\"` or [0, `maxLevel`]",
            meaning: "The level at every start: the saved one (`restore`; a fresh device takes `initialLevel`) or a fixed level; a fixed level is refused on `gpio-step` ([schedules and night](schedules-and-night.md))."),
        Key(path: "volume.night", values: "object or `null`", meaning: "The night cap: inside the window the level never exceeds `maxLevel`; refused on `gpio-step`; `setNightCap` over MQTT wins until this value changes."),
        Key(path: "volume.night.from", values: "`\"HH:MM\"` (local time)", meaning: "Where the window opens."),
        Key(path: "volume.night.to", values: "`\"HH:MM\"` (local time)", meaning: "Where it closes (may be past midnight)."),
        Key(path: "volume.night.maxLevel", values: "[0, `volume.maxLevel`]", meaning: "The cap inside the window."),
        Key(path: "volume.mixer.card", values: "ALSA card", meaning: "`alsa-mixer` only: the card whose mixer element is used."),
        Key(path: "volume.mixer.element", values: "mixer element", meaning: "`alsa-mixer` only: the element, set by dB (`ambient-speaker devices` lists those of card `default`; `amixer -c CARD scontrols` those of another)."),
        Key(path: "volume.gpioStep.up", values: "line name", meaning: "`gpio-step` only: the amplifier's volume-up input."),
        Key(path: "volume.gpioStep.down", values: "line name", meaning: "`gpio-step` only: the amplifier's volume-down input."),
        Key(path: "volume.gpioStep.activeLow", values: "boolean", meaning: "`gpio-step` only: a pulse pulls the line low."),
        Key(path: "volume.gpioStep.pulseMs", values: "1–1000", meaning: "`gpio-step` only: length of one pulse."),
        Key(path: "volume.gpioStep.gapMs", values: "1–1000", meaning: "`gpio-step` only: pause between pulses."),
        Key(path: "volume.gpioStep.maxPending", values: "1–1000", meaning: "`gpio-step` only: steps queued at most; more are refused."),
        Key(path: "mqtt.host", values: "host name or address", meaning: "The MQTT broker."),
        Key(path: "mqtt.port", values: "1–65535", meaning: "The broker's port."),
        Key(path: "mqtt.prefix", values: "topic prefix", meaning: "The first topic levels; no `+`, `#`, NUL or empty levels."),
        Key(path: "mqtt.username", values: "string or `null`", meaning: "The broker user."),
        Key(path: "mqtt.passwordFile", values: "path or `null`", meaning: "A file holding the password; refused when others may read it."),
        Key(path: "mqtt.tls", values: "object or `null`", meaning: "TLS to the broker; `null` is plain TCP."),
        Key(path: "mqtt.tls.caFile", values: "path", meaning: "The CA certificate (required with `tls`)."),
        Key(path: "mqtt.tls.certFile", values: "path or `null`", meaning: "A client certificate (with `keyFile`)."),
        Key(path: "mqtt.tls.keyFile", values: "path or `null`", meaning: "The client certificate's key (with `certFile`)."),
        Key(path: "mqtt.keepaliveSeconds", values: "5–3600", meaning: "MQTT keepalive."),
        Key(path: "mqtt.homeAssistant.enabled", values: "boolean", meaning: "Publish Home Assistant discovery."),
        Key(path: "mqtt.homeAssistant.prefix", values: "topic prefix", meaning: "Home Assistant's discovery prefix."),
        Key(path: "session.idleTimeoutSeconds", values: "1–604800", meaning: "A paused session ends after this."),
        Key(path: "session.resumeOnBoot", values: "boolean", meaning: "After a restart, play again what was playing."),
        Key(path: "sleepTimer.fadeSeconds", values: "0–1800", meaning: "The fade-out before a sleep timer ends, when `setSleepTimer` gives none ([sleep timer, mute and LED](sleep-timer-mute-led.md))."),
        Key(path: "statusLed", values: "object or `null`", meaning: "The status LED's output line; `null`: no LED (needs a restart)."),
        Key(path: "statusLed.line", values: "line name", meaning: "The LED's line (`GPIO16` in the wiring table)."),
        Key(path: "statusLed.activeLow", values: "boolean", meaning: "The LED lights when the line is low."),
        Key(path: "clock.requireSync", values: "boolean", meaning: "Schedules and the night cap wait for an NTP-synchronised clock; `false` for a board with a real-time clock."),
        Key(path: "clock.timeZone", values: "IANA zone name or `null`", meaning: "The zone schedules are in (`Europe/Berlin`, from `/usr/share/zoneinfo`); `null`: the system's `/etc/localtime`."),
        Key(path: "schedules", values: "array (at most 16)", meaning: "Rules that start or stop playback at a local time; `setSchedules` over MQTT wins until this value changes."),
        Key(path: "schedules[].at", values: "`\"HH:MM\"` (local time)", meaning: "When the rule fires."),
        Key(path: "schedules[].days", values: "array of `mon` … `sun` (optional)", meaning: "The days it fires on; absent: every day."),
        Key(path: "schedules[].action", values: "`play`, `stop`", meaning: "Start playback (fading in) or stop it (fading out, then the session ends)."),
        Key(path: "schedules[].soundID", values: "sound id or `null` (play only)", meaning: "What to play; `null`: the selected sound."),
        Key(path: "schedules[].level", values: "[0, 1] or `null` (play only)", meaning: "The level to play at; refused on `gpio-step`."),
        Key(path: "schedules[].fadeSeconds", values: "0–3600 (default 30)", meaning: "The fade-in or fade-out."),
        Key(path: "schedules[].enabled", values: "boolean (default `true`)", meaning: "A rule that is off keeps its place and does not fire."),
        Key(path: "stateDirectory", values: "path", meaning: "Where the saved state, the revision reservation, the saved mixes and the command journal (`commands.json`: commands owed an answer across a restart, see the contract's Delivery section) are kept."),
        Key(path: "mixes", values: "array (at most 32)", meaning: "Mixes of several sounds, listed in the catalog after the sounds ([mixes](mixes.md)); a mix saved over MQTT wins until this value changes."),
        Key(path: "mixes[].id", values: "1–64 of `a-z 0-9 - _`", meaning: "The mix's catalog id; not the id of a sound."),
        Key(path: "mixes[].name", values: "1–64 bytes", meaning: "The name shown to people."),
        Key(path: "mixes[].summary", values: "up to 200 bytes (optional)", meaning: "One line; without it the catalog names the mix's sounds."),
        Key(path: "mixes[].layers", values: "array of 1–4", meaning: "The sounds the mix plays at once."),
        Key(path: "mixes[].layers[].soundID", values: "sound id", meaning: "A sound of the catalog (not a mix)."),
        Key(path: "mixes[].layers[].level", values: "[0, 1]", meaning: "The layer's level, on the volume curve."),
    ]

    /// The documented path a model path falls under (buttons share one
    /// description of their members: `inputs.next.line` → `inputs.*.line`).
    static func documented(_ path: String) -> Key? {
        if let k = keys.first(where: { $0.path == path }) { return k }
        let parts = path.split(separator: ".")
        guard parts.count == 3, parts[0] == "inputs" else { return nil }
        return keys.first(where: { $0.path == "inputs.*.\(parts[2])" })
    }

    /// Every leaf of the resolved default configuration, with its JSON text.
    static func leaves(_ value: JSONValue, _ path: String = "") -> [(path: String, value: JSONValue)] {
        if case .object(let members) = value {
            return members.flatMap { leaves($0.value, path.isEmpty ? $0.key : "\(path).\($0.key)") }
        }
        return [(path, value)]
    }

    /// What the model and this table disagree on, each naming the key and
    /// where to fix it; empty when they agree.
    public static func problems() -> [String] {
        let model = leaves(SpeakerConfig.defaults(hostname: "hostname").json)
        let modelPaths = Set(model.map(\.path))
        var out: [String] = []
        for leaf in model where documented(leaf.path) == nil {
            out.append("config key \(leaf.path) (in SpeakerConfig.json) has no line in ConfigReference.keys (Sources/SpeakerCore/Config/ConfigReference.swift)")
        }
        for key in keys where !key.path.contains("*") {
            // A key under an optional or array value (mqtt.tls.caFile, schedules[].at) has no leaf of its own in the defaults.
            let known = modelPaths.contains(key.path)
                || modelPaths.contains(where: { key.path.hasPrefix($0 + ".") || key.path.hasPrefix($0 + "[]") || $0.hasPrefix(key.path + ".") })
            if !known { out.append("ConfigReference.keys documents \(key.path), which SpeakerConfig.json does not have") }
        }
        return out
    }

    /// The Markdown of `docs/configuration.md`.
    public static func markdown() -> String {
        let defaults = Dictionary(leaves(SpeakerConfig.defaults(hostname: "hostname").json).map { ($0.path, $0.value) },
                                  uniquingKeysWith: { a, _ in a })
        var lines = [
            "<!-- Generated by `ambient-speaker config-reference` from Sources/SpeakerCore/Config/ConfigReference.swift",
            "     and SpeakerConfig.defaults; scripts/check-docs fails when this file differs. Do not edit. -->",
            "# Configuration reference", "",
            "The speaker reads one JSON file (`/etc/ambient-speaker/config.json` when installed; `run --config FILE`",
            "elsewhere). Every key is optional: an absent key keeps the default below. An unknown key, a value of the",
            "wrong type or out of range is an error that names the key path (`audio.bufferFrames: must be at least twice",
            "audio.periodFrames (2048), got 1024`), and nothing starts. `ambient-speaker check-config FILE` validates a file",
            "and prints the resolved configuration in the same shape.", "",
            "| key | values | default | meaning |", "|---|---|---|---|",
        ]
        for key in keys {
            let shown: String
            if key.path.hasPrefix("device.") { shown = "(from the host name)" }
            else if key.path.hasPrefix("inputs.*.") { shown = "(per button, above)" }
            else if let v = defaults[key.path] {
                shown = "`\(v.jsonText)`"
            } else if let v = defaults.first(where: { key.path.hasPrefix($0.key + ".") })?.value, v == .null {
                shown = "—"
            } else if case .object(let m)? = SpeakerConfig.defaults(hostname: "hostname").json.member(path: key.path) {
                shown = "`" + m.map { "\"\($0.key)\": \($0.value.jsonText)" }.joined(separator: ", ") + "`"
            } else { shown = "—" }
            lines.append("| `\(key.path)` | \(key.values) | \(shown) | \(key.meaning) |")
        }
        lines.append("")
        lines.append("A button (`inputs.playPause`, `next`, `previous`, `encoderSwitch`) is an object of `line`, `activeLow` and `bias`; the")
        lines.append("defaults are GPIO17, GPIO27, GPIO22 and GPIO25, active low with the pull-up on (see [the wiring](../board/pinout.md)).")
        return lines.joined(separator: "\n") + "\n"
    }
}

extension JSONValue {
    /// The member at a dotted path of nested objects, or nil.
    func member(path: String) -> JSONValue? {
        var value = self
        for part in path.split(separator: ".") {
            guard case .object(let members) = value, let next = members.first(where: { $0.key == part })?.value else { return nil }
            value = next
        }
        return value
    }
}
