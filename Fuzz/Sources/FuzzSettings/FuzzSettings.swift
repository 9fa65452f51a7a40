// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
import SpeakerProtocol

/// libFuzzer entry point: one arbitrary SD card image settings file, decoded
/// (`ImageSettingsDecoder`) and planned against a fixed root view.
///
/// Checks, besides "never traps": a secret of the file (its `wifi.passphrase`
/// or `mqtt.password`, when it occurs once in the input) appears in no error,
/// notice or warning and in no planned file but the password's own; the
/// blanked copy of an accepted file parses and holds neither secret.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSettings(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let secrets = secretsOf(bytes)
    let view = SettingsSystemView(
        baseConfig: Array(#"{"board": {"kind": "simulated"}, "mqtt": {"host": "localhost"}}"#.utf8),
        hosts: "127.0.1.1\told\n", hostname: "old",
        wpaConfig: "network={\n\tssid=6e6574\n\tpsk=\(String(repeating: "ab", count: 32))\n}\n",
        firmwareCustom: "", configTxt: "[all]\n", passwordSaved: true,
        zoneExists: { $0 == "Europe/Berlin" || $0 == "Etc/UTC" })
    do {
        let raw = try JSONParser(maxDepth: 16).parse(bytes)
        let plan = try ImageSettingsDecoder().decode(raw).plan(raw: raw, view: view)
        for line in plan.notices + plan.warnings { check(Array(line.utf8), secrets, "a journal line") }
        for change in plan.changes {
            guard case .write(let path, let written, _, _) = change, path != SettingsPaths.password else { continue }
            check(written, secrets, path)
        }
        if let scrubbed = plan.scrubbed {
            check(scrubbed, secrets, "the blanked settings file")
            do { _ = try JSONParser(maxDepth: 16).parse(scrubbed) } catch {
                preconditionFailure("the blanked settings file does not parse: \(error)")
            }
        }
    } catch let error as JSONParseError {
        check(Array(error.description.utf8), secrets, "a parse error")
    } catch let error as ConfigError {
        precondition(!error.message.isEmpty, "a settings error without a message")
        check(Array(error.description.utf8), secrets, "a settings error")
    } catch {
        preconditionFailure("unexpected error type: \(error)")
    }
    return 0
}

/// `wifi.passphrase` and `mqtt.password` when each is at least 6 bytes and
/// occurs exactly once in the input (so no other field can hold it legitimately).
func secretsOf(_ bytes: [UInt8]) -> [[UInt8]] {
    guard let value = try? JSONParser(maxDepth: 16).parse(bytes) else { return [] }
    return [value["wifi"]?["passphrase"], value["mqtt"]?["password"]].compactMap { v -> [UInt8]? in
        guard let s = v?.stringValue, s.utf8.count >= 6 else { return nil }
        let needle = Array(s.utf8)
        return occurrences(of: needle, in: bytes) == 1 ? needle : nil
    }
}

func occurrences(of needle: [UInt8], in haystack: [UInt8]) -> Int {
    guard !needle.isEmpty, haystack.count >= needle.count else { return 0 }
    var n = 0
    for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] && Array(haystack[i..<i + needle.count]) == needle { n += 1 }
    return n
}

func check(_ output: [UInt8], _ secrets: [[UInt8]], _ what: String) {
    for s in secrets { precondition(occurrences(of: s, in: output) == 0, "a secret leaked into \(what)") }
}
