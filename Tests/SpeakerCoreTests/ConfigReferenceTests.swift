// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import SpeakerCore
import SpeakerProtocol

/// The configuration reference (docs/configuration.md) against the model it is
/// rendered from: every key of the model documented, every documented key a
/// key of the model, each default shown as `SpeakerConfig.defaults` has it.
@Suite struct ConfigReferenceTests {
    @Test func everyModelKeyIsDocumentedAndTheReverse() {
        #expect(ConfigReference.problems() == [])
    }

    @Test func aKeyMissingFromTheTableIsNamed() {
        // A leaf the model has that no documented path covers.
        #expect(ConfigReference.documented("audio.notAKey") == nil)
        #expect(ConfigReference.documented("inputs.next.bias")?.path == "inputs.*.bias")
    }

    @Test func defaultsComeFromTheModel() {
        let markdown = ConfigReference.markdown()
        let defaults = SpeakerConfig.defaults(hostname: "hostname")
        #expect(markdown.contains("| `audio.rewindMarginFrames` | 0–131072, below `bufferFrames` | `\(defaults.audio.rewindMarginFrames)` |"))
        #expect(markdown.contains("| `mqtt.port` | 1–65535 | `\(defaults.mqtt.port)` |"))
        #expect(markdown.contains("| `mqtt.tls.caFile` | path | — |"))
    }

    @Test func everyDocumentedKeyIsAcceptedByTheDecoder() throws {
        // Each documented leaf, set to its own default inside its section, decodes.
        let decoder = ConfigDecoder(hostname: "hostname")
        let defaults = SpeakerConfig.defaults(hostname: "hostname").json
        for key in ConfigReference.keys where !key.path.contains("*") {
            guard let value = defaults.member(path: key.path), value != .null else { continue }
            let parts = key.path.split(separator: ".").map(String.init)
            var json: JSONValue = value
            for part in parts.reversed() { json = .object([(part, json)]) }
            do { _ = try decoder.decode(json) } catch {
                Issue.record("\(key.path): \(error)")
            }
        }
    }
}
