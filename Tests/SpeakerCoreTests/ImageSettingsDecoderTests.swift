// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
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
}
