// SPDX-License-Identifier: Apache-2.0
/// An IP address prefix, parsed strictly (dotted quads of 0-255 without
/// leading zeros; IPv6 hex groups with at most one `::`).
struct AddressPrefix: Equatable {
    var isIPv6: Bool
    var length: Int
    /// The address: 4 or 16 bytes, network order.
    var bytes: [UInt8] = []

    init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let address = parts.first else { return nil }
        if address.contains(":") {
            guard Self.isIPv6(address) else { return nil }
            isIPv6 = true
        } else {
            guard Self.isIPv4(address) else { return nil }
            isIPv6 = false
        }
        let maximum = isIPv6 ? 128 : 32
        if parts.count == 2 {
            let digits = parts[1]
            guard (1...3).contains(digits.utf8.count), digits.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
                  let n = Int(digits), n <= maximum, digits == "0" || !digits.hasPrefix("0") else { return nil }
            length = n
        } else {
            length = maximum
        }
        bytes = isIPv6 ? Self.ipv6Bytes(address) : address.split(separator: ".").map { UInt8($0) ?? 0 }
    }

    /// The 16 bytes of an address `isIPv6` accepted.
    static func ipv6Bytes(_ s: Substring) -> [UInt8] {
        func words(_ h: Substring) -> [UInt16] {
            h.isEmpty ? [] : h.split(separator: ":", omittingEmptySubsequences: false).map { UInt16($0, radix: 16) ?? 0 }
        }
        let gap = s.firstRange(of: "::")
        let head = words(gap.map { s[..<$0.lowerBound] } ?? s)
        let tail = gap.map { words(s[$0.upperBound...]) } ?? []
        let all = head + [UInt16](repeating: 0, count: max(0, 8 - head.count - tail.count)) + tail
        return all.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
    }

    /// Whether the bit at `index` (0: the most significant) of `bytes` is set.
    static func bit(_ bytes: [UInt8], _ index: Int) -> Bool { bytes[index / 8] & (0x80 >> UInt8(index % 8)) != 0 }

    /// Whether `prefixes` (one family) together hold every address of it:
    /// each half of the address space is covered by a prefix at or above it,
    /// or by covering both of its own halves.
    static func coverEverything(_ prefixes: [AddressPrefix]) -> Bool {
        func covered(_ path: [Bool], _ candidates: [AddressPrefix]) -> Bool {
            if candidates.contains(where: { $0.length <= path.count }) { return true }
            if candidates.isEmpty { return false }
            return [false, true].allSatisfy { next in
                let below = path + [next]
                return covered(below, candidates.filter { bit($0.bytes, path.count) == next })
            }
        }
        return !prefixes.isEmpty && covered([], prefixes)
    }

    static func isIPv4(_ s: Substring) -> Bool {
        let octets = s.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets.allSatisfy { o in
            (1...3).contains(o.utf8.count) && o.utf8.allSatisfy { $0 >= 48 && $0 <= 57 }
                && (o == "0" || !o.hasPrefix("0")) && (Int(o) ?? 256) <= 255
        }
    }

    static func isIPv6(_ s: Substring) -> Bool {
        let b = Array(s.utf8)
        var halves: [String] = []
        var start = 0, i = 0
        while i + 1 < b.count {
            if b[i] == 58 && b[i + 1] == 58 {
                halves.append(String(decoding: b[start..<i], as: UTF8.self))
                i += 2
                start = i
            } else {
                i += 1
            }
        }
        halves.append(String(decoding: b[start...], as: UTF8.self))
        guard halves.count <= 2 else { return false }
        func groups(_ h: String) -> Int? {
            if h.isEmpty { return 0 }
            let g = h.split(separator: ":", omittingEmptySubsequences: false)
            guard g.allSatisfy({ (1...4).contains($0.utf8.count) && $0.utf8.allSatisfy { c in
                (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102) } }) else { return nil }
            return g.count
        }
        guard let first = groups(halves[0]) else { return false }
        if halves.count == 1 { return first == 8 }
        guard let second = groups(halves[1]) else { return false }
        return first + second <= 7
    }
}
