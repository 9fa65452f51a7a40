// SPDX-License-Identifier: Apache-2.0
/// The WPA/WPA2 personal pre-shared key of a passphrase and an SSID:
/// PBKDF2-HMAC-SHA1(passphrase, ssid, 4096 iterations, 32 bytes), as in
/// IEEE 802.11i-2004 H.4 and `wpa_passphrase`. Derived in process so the
/// passphrase never reaches another program's command line or a pipe.
/// Pure; any thread.
public enum WPAKey {
    /// The 32-byte PSK of `passphrase` (8-63 printable ASCII) for `ssid` (1-32 bytes).
    public static func derive(passphrase: [UInt8], ssid: [UInt8]) -> [UInt8] {
        PBKDF2.sha1(password: passphrase, salt: ssid, iterations: 4096, length: 32)
    }

    /// Lower-case hex, the form `psk=` takes in wpa_supplicant.conf.
    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes { out.append(digits[Int(b >> 4)]); out.append(digits[Int(b & 15)]) }
        return String(decoding: out, as: UTF8.self)
    }
}

/// PBKDF2 (RFC 8018) over HMAC-SHA1 (RFC 2104). Pure; any thread.
public enum PBKDF2 {
    public static func sha1(password: [UInt8], salt: [UInt8], iterations: Int, length: Int) -> [UInt8] {
        let mac = HMACSHA1(key: password)
        var out: [UInt8] = []
        var block: UInt32 = 1
        while out.count < length {
            let first = mac.authenticate(salt + [UInt8(block >> 24), UInt8(block >> 16 & 0xFF), UInt8(block >> 8 & 0xFF), UInt8(block & 0xFF)])
            out.append(contentsOf: mac.iterate(first, count: iterations - 1))
            block += 1
        }
        return Array(out.prefix(length))
    }
}

/// HMAC-SHA1 with the key's inner and outer pads computed once.
struct HMACSHA1 {
    private let inner: SHA1
    private let outer: SHA1

    init(key: [UInt8]) {
        var k = key.count > 64 ? SHA1.hash(key) : key
        k += [UInt8](repeating: 0, count: 64 - k.count)
        var i = SHA1(), o = SHA1()
        i.update(k.map { $0 ^ 0x36 })
        o.update(k.map { $0 ^ 0x5C })
        inner = i
        outer = o
    }

    func authenticate(_ message: [UInt8]) -> [UInt8] {
        var i = inner
        i.update(message)
        var o = outer
        o.update(i.finish())
        return o.finish()
    }

    /// PBKDF2's inner loop: `u = HMAC(u)` `count` times, answering the XOR of
    /// `first` and every `u`. A 20-byte message after a 64-byte pad is one
    /// block for each hash, so each round is two compressions from the pads'
    /// saved states, with no allocation.
    func iterate(_ first: [UInt8], count: Int) -> [UInt8] {
        var u = SHA1.words(first)
        var t = u
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 80) { w in
            for _ in 0..<max(0, count) {
                var s = inner.state
                SHA1.oneBlock(&s, digest: u, length: 84, w)
                var o = outer.state
                SHA1.oneBlock(&o, digest: s, length: 84, w)
                u = o
                t = (t.0 ^ u.0, t.1 ^ u.1, t.2 ^ u.2, t.3 ^ u.3, t.4 ^ u.4)
            }
        }
        return SHA1.bytes(t)
    }
}

/// SHA-1 (FIPS 180-4), incremental. Only for PBKDF2 of the WPA key, where the
/// standard fixes it; not for anything that needs collision resistance.
struct SHA1 {
    typealias State = (UInt32, UInt32, UInt32, UInt32, UInt32)
    private var h: State = (0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0)
    private var pending: [UInt8] = []
    private var length: UInt64 = 0

    static func hash(_ bytes: [UInt8]) -> [UInt8] {
        var s = SHA1()
        s.update(bytes)
        return s.finish()
    }

    mutating func update(_ bytes: [UInt8]) {
        length += UInt64(bytes.count)
        pending.append(contentsOf: bytes)
        var start = 0
        while pending.count - start >= 64 {
            compress(pending, at: start)
            start += 64
        }
        if start > 0 { pending.removeFirst(start) }
    }

    /// The chaining value (meaningful after whole blocks only, as after an HMAC pad).
    var state: State { h }

    static func words(_ digest: [UInt8]) -> State {
        func word(_ i: Int) -> UInt32 {
            UInt32(digest[i]) << 24 | UInt32(digest[i + 1]) << 16 | UInt32(digest[i + 2]) << 8 | UInt32(digest[i + 3])
        }
        return (word(0), word(4), word(8), word(12), word(16))
    }

    static func bytes(_ s: State) -> [UInt8] {
        var out: [UInt8] = []
        for word in [s.0, s.1, s.2, s.3, s.4] {
            out += [UInt8(word >> 24), UInt8(word >> 16 & 0xFF), UInt8(word >> 8 & 0xFF), UInt8(word & 0xFF)]
        }
        return out
    }

    /// Hashes the last block of a message whose final part is the 20-byte
    /// `digest` (the message `length` bytes long in all) into `h`, using `w`
    /// (80 words) as the schedule.
    static func oneBlock(_ h: inout State, digest: State, length: Int, _ w: UnsafeMutableBufferPointer<UInt32>) {
        w[0] = digest.0; w[1] = digest.1; w[2] = digest.2; w[3] = digest.3; w[4] = digest.4
        w[5] = 0x8000_0000
        for i in 6..<15 { w[i] = 0 }
        w[15] = UInt32(length * 8)
        compress(&h, w)
    }

    mutating func finish() -> [UInt8] {
        let bits = length &* 8
        var tail = pending + [0x80]
        while tail.count % 64 != 56 { tail.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { tail.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
        var start = 0
        while start < tail.count { compress(tail, at: start); start += 64 }
        pending = []
        return Self.bytes(h)
    }

    private mutating func compress(_ bytes: [UInt8], at start: Int) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 80) { w in
            for t in 0..<16 {
                let i = start + 4 * t
                w[t] = UInt32(bytes[i]) << 24 | UInt32(bytes[i + 1]) << 16 | UInt32(bytes[i + 2]) << 8 | UInt32(bytes[i + 3])
            }
            Self.compress(&h, w)
        }
    }

    /// One compression: the first 16 words of `w` are the block; the rest is the schedule.
    private static func compress(_ h: inout State, _ w: UnsafeMutableBufferPointer<UInt32>) {
        for t in 16..<80 {
            let x = w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16]
            w[t] = x << 1 | x >> 31
        }
        var (a, b, c, d, e) = h
        for t in 0..<80 {
            let f: UInt32, k: UInt32
            switch t {
            case 0..<20: f = (b & c) | (~b & d); k = 0x5A82_7999
            case 20..<40: f = b ^ c ^ d; k = 0x6ED9_EBA1
            case 40..<60: f = (b & c) | (b & d) | (c & d); k = 0x8F1B_BCDC
            default: f = b ^ c ^ d; k = 0xCA62_C1D6
            }
            let temp = (a << 5 | a >> 27) &+ f &+ e &+ k &+ w[t]
            e = d; d = c; c = b << 30 | b >> 2; b = a; a = temp
        }
        h = (h.0 &+ a, h.1 &+ b, h.2 &+ c, h.3 &+ d, h.4 &+ e)
    }
}
