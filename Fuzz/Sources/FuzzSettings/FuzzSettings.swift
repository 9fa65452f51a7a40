// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
import SpeakerProtocol

/// libFuzzer entry point: one arbitrary SD card image settings file, decoded
/// (`ImageSettingsDecoder`) and planned against a fixed root view.
///
/// Checks, besides "never traps": a secret of the file (its `wifi.passphrase`
/// or `mqtt.password`, when it occurs once in the input as a whole string)
/// appears in no error, notice or warning and in no planned file but its own
/// destination (the Wi-Fi config, which holds a 64-digit PSK as given; the
/// password file); the blanked copy of an accepted file parses.
///
/// A secret can be an ordinary word that the speaker's own messages use (a
/// password `volume` beside an error listing the key `volume`), so a leak is
/// judged against the same file with the secret's bytes swapped for others of
/// the same kind: a secret leaks when an output holds it more often than that
/// output does for the swapped file.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSettings(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let found = outputs(bytes)
    for secret in secretsOf(bytes) {
        let leaks = found.filter { $0.what != secret.destination && occurrences(of: secret.needle, in: $0.text) > 0 }
        guard !leaks.isEmpty else { continue }
        var swapped = bytes
        swapped.replaceSubrange(secret.range, with: secret.needle.map(substitute))
        let baseline = outputs(swapped)
        for leak in leaks {
            let expected = baseline.filter { $0.what == leak.what }
                .map { occurrences(of: secret.needle, in: $0.text) }.max() ?? 0
            precondition(occurrences(of: secret.needle, in: leak.text) <= expected, "a secret leaked into \(leak.what)")
        }
    }
    return 0
}

/// Every text the decoder and planner produce for a file, each named by
/// where it would go: journal lines, planned files,
/// the blanked settings file, an error.
func outputs(_ bytes: [UInt8]) -> [(what: String, text: [UInt8])] {
    let view = SettingsSystemView(
        baseConfig: Array(#"{"board": {"kind": "simulated"}, "mqtt": {"host": "localhost"}}"#.utf8),
        hosts: "127.0.1.1\told\n", hostname: "old",
        wpaConfig: "network={\n\tssid=6e6574\n\tpsk=\(String(repeating: "ab", count: 32))\n}\n",
        firmwareCustom: "", configTxt: "[all]\n", passwordSaved: true,
        zoneExists: { $0 == "Europe/Berlin" || $0 == "Etc/UTC" })
    var found: [(what: String, text: [UInt8])] = []
    do {
        let raw = try JSONParser(maxDepth: 16).parse(bytes)
        let plan = try AppliedSettings.plan(file: raw, previous: nil, view: view)
        for line in plan.notices + plan.warnings { found.append(("a journal line", Array(line.utf8))) }
        for change in plan.changes {
            guard case .write(let path, let written, _, _) = change else { continue }
            found.append((path, written))
        }
        if let scrubbed = plan.scrubbed {
            found.append(("the blanked settings file", scrubbed))
            do { _ = try JSONParser(maxDepth: 16).parse(scrubbed) } catch {
                preconditionFailure("the blanked settings file does not parse: \(error)")
            }
        }
    } catch let error as JSONParseError {
        found.append(("a parse error", Array(error.description.utf8)))
    } catch let error as ConfigError {
        precondition(!error.message.isEmpty, "a settings error without a message")
        found.append(("a settings error", Array(error.description.utf8)))
    } catch {
        preconditionFailure("unexpected error type: \(error)")
    }
    return found
}

/// `wifi.passphrase` and `mqtt.password` when each is at least 6 bytes and
/// occurs exactly once in the input, between quotes (so it is that string's
/// own bytes, without escapes, and no other field holds it), with where it
/// is in the input and the one file it belongs in.
func secretsOf(_ bytes: [UInt8]) -> [(needle: [UInt8], range: Range<Int>, destination: String)] {
    guard let value = try? JSONParser(maxDepth: 16).parse(bytes) else { return [] }
    let fields = [(value["wifi"]?["passphrase"], SettingsPaths.wpaConfig), (value["mqtt"]?["password"], SettingsPaths.password)]
    return fields.compactMap { v, destination in
        guard let s = v?.stringValue, s.utf8.count >= 6 else { return nil }
        let needle = Array(s.utf8)
        let at = starts(of: needle, in: bytes)
        guard at.count == 1, let i = at.first, i > 0, i + needle.count < bytes.count,
              bytes[i - 1] == UInt8(ascii: "\""), bytes[i + needle.count] == UInt8(ascii: "\"") else { return nil }
        return (needle, i..<i + needle.count, destination)
    }
}

/// A byte of the same kind as `b` but not `b`: a hex digit for a hex digit
/// (a 64-digit PSK stays one), a letter for anything else, so the swapped
/// file takes the same path through the checks.
func substitute(_ b: UInt8) -> UInt8 {
    let isHex = (b >= 0x30 && b <= 0x39) || (b >= 0x61 && b <= 0x66) || (b >= 0x41 && b <= 0x46)
    if isHex { return b == UInt8(ascii: "a") ? UInt8(ascii: "b") : UInt8(ascii: "a") }
    return b == UInt8(ascii: "Z") ? UInt8(ascii: "Y") : UInt8(ascii: "Z")
}

func starts(of needle: [UInt8], in haystack: [UInt8]) -> [Int] {
    guard !needle.isEmpty, haystack.count >= needle.count else { return [] }
    return (0...(haystack.count - needle.count)).filter { i in
        haystack[i] == needle[0] && haystack[i..<i + needle.count].elementsEqual(needle)
    }
}

func occurrences(of needle: [UInt8], in haystack: [UInt8]) -> Int { starts(of: needle, in: haystack).count }
