// SPDX-License-Identifier: Apache-2.0
@testable import SpeakerCore
import SpeakerProtocol
import Testing

/// The settings decoder's states and byte rules, without files (the applier
/// end to end is in DaemonTests: SettingsApplyTests, HostileSettingsTests).
struct ImageSettingsDecoderTests {
    func decode(_ text: String) throws(ConfigError) -> ImageSettings { try ImageSettingsDecoder().decode(Array(text.utf8)) }

    func wifi(_ members: String) throws(ConfigError) -> ImageSettings.WiFi {
        try decode("{\"wifi\": {\"country\": \"DE\", \"ssid\": \"net\"\(members)}}").wifi
    }

    @Test func theFourWiFiKeyStatesAreDistinct() throws {
        #expect(try wifi(", \"passphrase\": \"12345678\"") == .network(country: "DE", ssid: Array("net".utf8), key: .passphrase(Array("12345678".utf8))))
        #expect(try wifi(", \"passphrase\": null") == .network(country: "DE", ssid: Array("net".utf8), key: .keepSaved))
        #expect(try wifi("") == .network(country: "DE", ssid: Array("net".utf8), key: .keepSaved))
        #expect(try wifi(", \"open\": true") == .network(country: "DE", ssid: Array("net".utf8), key: .open))
        #expect(try wifi(", \"passphrase\": \"\(String(repeating: "0f", count: 32))\"")
            == .network(country: "DE", ssid: Array("net".utf8), key: .psk([UInt8](repeating: 0x0F, count: 32))))
        #expect(throws: ConfigError.self) { try wifi(", \"passphrase\": \"\"") }
        #expect(try decode("{\"wifi\": {\"country\": \"\", \"ssid\": \"\", \"passphrase\": \"\"}}").wifi == .off)
        #expect(try decode("{\"wifi\": null}").wifi == .unchanged)
        #expect(try decode("{}").wifi == .unchanged)
    }

    @Test func secretsNeverAppearInErrors() {
        for bad in ["\"pass\\tword1\"", "\"short\"", "\"\(String(repeating: "é", count: 10))\""] {
            do {
                _ = try wifi(", \"passphrase\": \(bad)")
                Issue.record("accepted \(bad)")
            } catch {
                #expect(error.path == "wifi.passphrase")
                #expect(!error.message.contains("pass") || error.message.contains("passphrase") , "\(error)")
                #expect(!error.message.contains("short") && !error.message.contains("é"), "\(error)")
            }
        }
        do {
            _ = try decode("{\"mqtt\": {\"password\": \"secret\\nline\"}}")
            Issue.record("accepted a newline")
        } catch {
            #expect(error.path == "mqtt.password" && !error.message.contains("secret"))
        }
    }

    @Test func commentsAreSkippedAndUnknownKeysNamed() throws {
        #expect(try decode("{\"_about\": 1, \"_x\": [true]}") == ImageSettings())
        #expect(throws: ConfigError(path: "wifii", message: "unknown key (known keys here: brokerNetworks, dac, device, hostname, mqtt, speaker, sshAuthorizedKeys, timezone, volume, wifi)")) {
            try decode("{\"wifii\": {}}")
        }
    }

    @Test func theMQTTSecretsLeaveTheDaemonKeys() throws {
        let s = try decode("{\"mqtt\": {\"host\": \"b\", \"password\": \"pw\", \"caCertificate\": \"-----BEGIN CERTIFICATE-----\\nQUJD\\n-----END CERTIFICATE-----\"}}")
        #expect(s.mqttPassword == .set(Array("pw".utf8)))
        #expect(s.mqttCACertificate == "-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----\n")
        #expect(s.mqtt == .object([("host", .string("b"))]))
        #expect(try decode("{\"mqtt\": {\"password\": \"\"}}").mqttPassword == .none)
        #expect(try decode("{\"mqtt\": {\"password\": null}}").mqttPassword == .keepSaved)
    }

    @Test func sha256MatchesTheStandardsVectors() {
        #expect(SHA256.hex([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
            == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(SHA256.hex([UInt8](repeating: 0x61, count: 1000)) == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
    }

    @Test func aFileIsMergedOverTheAppliedSettings() throws {
        let previous = try JSONParser().parse(Array("""
            {"hostname": "a", "wifi": {"country": "DE", "ssid": "x", "open": true}, "mqtt": {"host": "h", "port": 8883, "password": null}}
            """.utf8))
        let file = try JSONParser().parse(Array("""
            {"_c": 1, "hostname": null, "wifi": {"country": "DE", "ssid": "y", "passphrase": "12345678"}, "mqtt": {"host": "b", "password": "pw"}}
            """.utf8))
        let merged = AppliedSettings.merged(previous: previous, file: file)
        #expect(merged.jsonText == #"{"hostname":"a","wifi":{"country":"DE","ssid":"y","passphrase":"12345678"},"mqtt":{"host":"b","port":8883,"password":"pw"}}"#)
        #expect(AppliedSettings.stored(merged).jsonText == #"{"hostname":"a","wifi":{"country":"DE","ssid":"y","passphrase":null},"mqtt":{"host":"b","port":8883,"password":null}}"#)
    }

    @Test func prefixesCoveringEveryAddressAreFound() {
        func covers(_ texts: [String]) -> Bool { AddressPrefix.coverEverything(texts.compactMap(AddressPrefix.init)) }
        #expect(covers(["0.0.0.0/1", "128.0.0.0/1"]))
        #expect(covers(["::/1", "8000::/1"]))
        #expect(covers(["0.0.0.0/2", "64.0.0.0/2", "128.0.0.0/1"]))
        #expect(!covers(["0.0.0.0/1", "128.0.0.0/2"]))
        #expect(!covers(["100.64.0.0/10", "10.0.0.0/8"]))
        #expect(!covers(["::/1", "8000::/2"]))
        #expect(AddressPrefix("2001:db8::1")?.bytes == [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [1])
    }

    @Test func onlyZoneNamesAreZones() {
        for good in ["Europe/Berlin", "Etc/UTC", "UTC", "EST5EDT", "America/Argentina/Buenos_Aires", "Etc/GMT+5"] {
            #expect(SettingsFields.isZoneName(good), "\(good)")
        }
        for bad in ["localtime", "posixrules", "leapseconds", "right/Europe/Berlin", "posix/Etc/UTC", "zone.tab", "SECURITY", "Europe/../etc"] {
            #expect(!SettingsFields.isZoneName(bad), "\(bad)")
        }
    }

    @Test func logTextEscapesControlCharacters() {
        #expect(LogText.escaped("a\n<0>b\u{1b}[2J\u{9b}c é") == "a\\u000a<0>b\\u001b[2J\\u009bc é")
    }
}
