// SPDX-License-Identifier: Apache-2.0
import Testing
import SpeakerCore
import SpeakerProtocol

@Suite struct ConfigTests {
    let decoder = ConfigDecoder(hostname: "Living Room.local")

    func error(_ json: String) -> String? {
        do { _ = try decoder.decode(Array(json.utf8)); return nil } catch { return error.description }
    }

    @Test func anEmptyFileGivesTheDocumentedDefaults() throws {
        let c = try decoder.decode(Array("{}".utf8))
        #expect(c.device.id == "living-room-local")
        #expect(c.board.kind == .gpio)
        #expect(c.inputs.playPause == ButtonLine(line: "GPIO17", activeLow: true, bias: .pullUp))
        #expect(c.inputs.encoder.stepsPerDetent == 4)
        #expect(c.audio.sampleRate == 48000 && c.audio.fadeMs == 400 && c.audio.crossfadeMs == 1500)
        #expect(c.volume.mode == .software && c.volume.step == 0.05 && c.volume.initialLevel == 0.4)
        #expect(c.mqtt.port == 1883 && c.mqtt.prefix == "ambient-speaker" && c.mqtt.homeAssistant.enabled)
        #expect(c.session.idleTimeoutSeconds == 1800)
        #expect(c.topicRoot == "ambient-speaker/living-room-local")
    }

    @Test func loopMemoryHasADefaultAndARange() throws {
        #expect(try decoder.decode(Array("{}".utf8)).audio.loopMemoryKB == 3072)
        #expect(try decoder.decode(Array(#"{"audio":{"loopMemoryKB":0}}"#.utf8)).audio.loopMemoryKB == 0)
        #expect(error(#"{"audio":{"loopMemoryKB":-1}}"#)?.hasPrefix("audio.loopMemoryKB: ") == true)
        #expect(error(#"{"audio":{"loopMemoryKB":2000000}}"#)?.hasPrefix("audio.loopMemoryKB: ") == true)
        #expect(try decoder.decode(Array("{}".utf8)).audio.rewindMarginFrames == 256)
        #expect(try decoder.decode(Array(#"{"audio":{"rewindMarginFrames":0}}"#.utf8)).audio.rewindMarginFrames == 0)
        #expect(error(#"{"audio":{"rewindMarginFrames":4096}}"#)?.hasPrefix("audio.rewindMarginFrames: must be below audio.bufferFrames") == true)
    }

    @Test(arguments: [
        (#"{"volume":{"step":2}}"#, "volume.step: must be in (0, 0.5], got 2"),
        (#"{"volume":{"step":0}}"#, "volume.step: must be in (0, 0.5], got 0"),
        (#"{"volume":{"mode":"loud"}}"#, #"volume.mode: expected one of "software", "alsa-mixer", "gpio-step", got "loud""#),
        (#"{"audio":{"sampleRate":"48k"}}"#, #"audio.sampleRate: expected a whole number in 8000...192000, got "48k""#),
        (#"{"inputs":{"encoder":{"stepsPerDetent":3}}}"#, "inputs.encoder.stepsPerDetent: must be 1, 2 or 4, got 3"),
        (#"{"audio":{"periodFrames":1024,"bufferFrames":1024}}"#, "audio.bufferFrames: must be at least twice audio.periodFrames (2048), got 1024"),
        (#"{"volume":{"maxLevel":0.5,"initialLevel":0.6}}"#, "volume.initialLevel: must not exceed volume.maxLevel (0.5), got 0.6"),
        (#"{"mqtt":{"prefix":"home/+/speakers"}}"#, #"mqtt.prefix: must not contain the MQTT wildcards + or #, got "home/+/speakers""#),
        (#"{"mqtt":{"prefix":"home//speakers"}}"#, #"mqtt.prefix: must not have empty levels (leading, trailing or double '/'), got "home//speakers""#),
        (#"{"device":{"id":"Kitchen#1"}}"#, #"device.id: must match [a-z0-9][a-z0-9-]{0,62}, got "Kitchen#1""#),
        (#"{"inputs":{"next":{"line":"GPIO17"}}}"#, "inputs.next.line: line GPIO17 is already used by inputs.playPause.line"),
        (#"{"volume":{"mode":"gpio-step","gpioStep":{"up":"GPIO23"}}}"#, "volume.gpioStep.up: line GPIO23 is already used by inputs.encoder.a"),
        (#"{"mqtt":{"tls":{"caFile":"/ca.pem","certFile":"/c.pem"}}}"#, "mqtt.tls.keyFile: certFile and keyFile go together"),
        (#"{"board":{"kind":"gpio","controlSocket":"/tmp/s"}}"#, #"board.controlSocket: only a simulated board has a control socket (board.kind is "gpio")"#),
        (#"{"mqtt":{"port":0}}"#, "mqtt.port: must be in 1...65535, got 0"),
        (#"{"session":{"idleTimeoutSeconds":1.5}}"#, "session.idleTimeoutSeconds: expected a whole number in 1...604800, got 1.5"),
        (#"{"inputs":{"debounceMs":30,"longPressMs":20}}"#, "inputs.longPressMs: must be in 100...10000, got 20"),
        (#"[]"#, "(file): expected an object, got an array"),
    ])
    func badValuesNameTheKeyAndWhatWasExpected(json: String, message: String) {
        #expect(error(json) == message)
    }

    @Test func unknownKeysAreErrorsThatNameThem() {
        #expect(error(#"{"volume":{"stepp":0.1}}"#)?.hasPrefix("volume.stepp: unknown key") == true)
        #expect(error(#"{"colour":"red"}"#)?.hasPrefix("colour: unknown key") == true)
        #expect(error(#"{"inputs":{"encoder":{"c":"GPIO4"}}}"#)?.hasPrefix("inputs.encoder.c: unknown key") == true)
        #expect(error(#"{"":1}"#)?.hasPrefix(#""": unknown key"#) == true, "an empty key is shown quoted")
        #expect(error(#"{"mqtt":{"a.b":1}}"#)?.hasPrefix(#"mqtt."a.b": unknown key"#) == true)
    }

    @Test func brokenJSONSaysWhere() {
        #expect(error("{\"volume\": {\"step\": 0.1,}}")?.hasPrefix("(file): not valid JSON: expected a member name in quotes at byte") == true)
        #expect(error(#"{"a":1,"a":2}"#)?.contains("duplicate key") == true)
    }

    @Test func nullDisablesTheEncoderSwitchAndTLS() throws {
        let c = try decoder.decode(Array(#"{"inputs":{"encoderSwitch":null},"mqtt":{"tls":null}}"#.utf8))
        #expect(c.inputs.encoderSwitch == nil)
        #expect(c.mqtt.tls == nil)
    }

    @Test func theResolvedConfigReadsBackAsTheSameConfig() throws {
        let json = #"""
        {"device":{"id":"kitchen","name":"Kitchen"},"board":{"kind":"simulated","controlSocket":"/run/s.sock"},
         "inputs":{"encoder":{"stepsPerDetent":2,"acceleration":false},"doublePressMs":250},
         "volume":{"mode":"gpio-step","gpioStep":{"pulseMs":15}},
         "mqtt":{"tls":{"caFile":"/etc/ca.pem"},"username":"spk","passwordFile":"/etc/pw"},"stateDirectory":"/tmp/st"}
        """#
        let c = try decoder.decode(Array(json.utf8))
        #expect(try decoder.decode(c.json) == c)
        #expect(c.volume.gpioStep.pulseMs == 15 && c.inputs.doublePressMs == 250)
    }

    @Test func deviceIDsFromHostnames() {
        #expect(DeviceSection.deviceID(fromHostname: "RaspberryPi") == "raspberrypi")
        #expect(DeviceSection.deviceID(fromHostname: "--") == "speaker")
        #expect(DeviceSection.isValidID("a") && !DeviceSection.isValidID("-a") && !DeviceSection.isValidID(String(repeating: "a", count: 64)))
    }
}

@Suite struct JSONTests {
    @Test(arguments: ["", "{", "[1,]", "{\"a\" 1}", "01", "1.", "\"\\x\"", "\"\u{01}\"", "tru", "nul", "[1] x", "\"\\ud800\"", "NaN"])
    func invalidTextIsRejectedWithAnOffset(text: String) {
        #expect(throws: JSONParseError.self) { try JSONParser().parse(text) }
    }

    @Test func deepNestingIsRefused() {
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(throws: JSONParseError.self) { try JSONParser(maxDepth: 32).parse(deep) }
    }

    @Test func valuesRoundTrip() throws {
        let text = #"{"s":"a\"b\\c\n\u0001é😀","n":[0,-1.5,1e-7,12345678901234],"b":[true,false,null],"o":{}}"#
        let v = try JSONParser().parse(text)
        #expect(try JSONParser().parse(v.serialized()) == v)
        #expect(v["s"]?.stringValue == "a\"b\\c\n\u{01}é😀")
        #expect(try JSONParser().parse(#""\ud83d\ude00""#) == .string("😀"))
        #expect(JSONValue.number(.nan).jsonText == "null")
        #expect(JSONValue.number(3).jsonText == "3")
    }

    /// Every byte that needs an escape, at the start, in the middle and at
    /// the end of a string, between runs that are copied whole.
    @Test func stringsAreEscapedExactly() throws {
        #expect(JSONValue.string("").jsonText == #""""#)
        #expect(JSONValue.string("plain é😀").jsonText == #""plain é😀""#)
        #expect(JSONValue.string("\"a\\b\nc\rd\te\u{1F}").jsonText == #""\"a\\b\nc\rd\te\u001f""#)
        var all = ""
        for code in 0..<0x80 { all.unicodeScalars.append(Unicode.Scalar(UInt8(code))) }
        let text = JSONValue.string(all).jsonText
        #expect(text.hasPrefix(#""\u0000\u0001"#) && text.contains(##"\u001f !\"#$"##) && text.hasSuffix("}~\u{7F}\""))
        #expect(try JSONParser().parse(text) == .string(all))
    }

    /// Every field padded, leap days and the turn of the year, before and after
    /// 1970, and the slow path beyond year 9999.
    @Test func wallClockReadingsAreISO8601() {
        #expect(WallClockReading(seconds: 0, milliseconds: 5).iso8601 == "1970-01-01T00:00:00.005Z")
        #expect(WallClockReading(seconds: 1_796_138_745, milliseconds: 123).iso8601 == "2026-12-01T15:25:45.123Z")
        #expect(WallClockReading(seconds: 951_782_399, milliseconds: 999).iso8601 == "2000-02-28T23:59:59.999Z")
        #expect(WallClockReading(seconds: 951_782_400 + 86_399, milliseconds: 0).iso8601 == "2000-02-29T23:59:59.000Z")
        #expect(WallClockReading(seconds: -3_153_600_001, milliseconds: 40).iso8601 == "1870-01-24T23:59:59.040Z")
        #expect(WallClockReading(seconds: 253_402_300_800, milliseconds: 7).iso8601 == "10000-01-01T00:00:00.007Z")
    }
}
