// SPDX-License-Identifier: Apache-2.0
/// Just enough reading of the speaker's `session` payload for the latency
/// benchmark, without a JSON library (the bench does not depend on
/// SpeakerProtocol): the scalar after a key. Pure; any thread.
///
/// It finds the first `"key"` followed by `:` (whitespace allowed), starting
/// at an optional anchor key, and returns the scalar token after it. That
/// relies on the contract's session shape — the only `level` is the device
/// volume in `devices[0].volume` — not on a general JSON parse.
struct SessionFields {
    private let bytes: [UInt8]

    /// Wraps a payload.
    init(_ payload: [UInt8]) { bytes = payload }

    /// `devices[0].volume.level`: the first `level` after `"devices"`.
    var volumeLevel: Double? { number(for: "level", after: "devices") }

    /// The top-level `isPlaying` flag (it precedes `devices`).
    var isPlaying: Bool? {
        switch token(for: "isPlaying", after: nil) {
        case "true": return true
        case "false": return false
        default: return nil
        }
    }

    /// The number after the first `key` found after `anchor`, or nil.
    func number(for key: String, after anchor: String?) -> Double? {
        token(for: key, after: anchor).flatMap { Double($0) }
    }

    /// The raw scalar (number, true, false, null) after the first `key` after `anchor`.
    func token(for key: String, after anchor: String?) -> String? {
        var start = 0
        if let anchor {
            guard let found = keyEnd(anchor, from: 0) else { return nil }
            start = found
        }
        guard var i = keyEnd(key, from: start) else { return nil }
        while i < bytes.count, bytes[i] == UInt8(ascii: " ") { i += 1 }
        let first = i
        let stops: Set<UInt8> = [UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: " ")]
        while i < bytes.count, !stops.contains(bytes[i]) { i += 1 }
        return i > first ? String(decoding: bytes[first..<i], as: UTF8.self) : nil
    }

    /// The index just past `"key"` and its colon, searching from `from`.
    private func keyEnd(_ key: String, from: Int) -> Int? {
        let needle = Array("\"\(key)\"".utf8)
        guard needle.count <= bytes.count else { return nil }
        var i = from
        while i + needle.count <= bytes.count {
            if bytes[i] == needle[0] && Array(bytes[i..<(i + needle.count)]) == needle {
                var j = i + needle.count
                while j < bytes.count, bytes[j] == UInt8(ascii: " ") || bytes[j] == UInt8(ascii: "\n") { j += 1 }
                if j < bytes.count, bytes[j] == UInt8(ascii: ":") { return j + 1 }
            }
            i += 1
        }
        return nil
    }
}
