// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

/// The monotonic clock (`clock_gettime(CLOCK_MONOTONIC)`), the clock of
/// timer deadlines and kernel GPIO edge timestamps. Callable from any thread.
public enum MonotonicClock {
    /// Nanoseconds since an arbitrary origin (boot). Never goes backwards.
    public static func now() -> UInt64 {
        var ts = timespec()
        // clock_gettime(CLOCK_MONOTONIC) cannot fail with a valid pointer.
        _ = clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }
}

/// The wall clock (`clock_gettime(CLOCK_REALTIME)`), for timestamps shown to
/// people and sent over MQTT. It can jump; never use it for deadlines.
/// Callable from any thread.
public enum WallClock {
    /// Seconds and nanoseconds since the Unix epoch.
    public static func now() -> (seconds: Int64, nanoseconds: Int32) {
        var ts = timespec()
        _ = clock_gettime(CLOCK_REALTIME, &ts)
        return (Int64(ts.tv_sec), Int32(ts.tv_nsec))
    }
}

/// Reads `n` bytes from the kernel's random source (`getrandom(2)`, flags 0).
/// Throws only if the kernel lacks `getrandom`. Callable from any thread.
public func systemRandomBytes(_ n: Int) throws(SystemError) -> [UInt8] {
    let calls = try LinuxCalls.shared()
    var bytes = [UInt8](repeating: 0, count: n)
    var filled = 0
    while filled < n {
        let got = try systemCall("getrandom") {
            bytes.withUnsafeMutableBytes { calls.getrandom($0.baseAddress! + filled, n - filled, 0) }
        }
        filled += got
    }
    return bytes
}

/// Reads `n` random bytes with `getrandom(2)`; if that is unavailable, from
/// `/dev/urandom`. Callable from any thread.
///
/// On Linux ≥ 3.17 `getrandom` with flags 0 does not fail for these sizes.
/// Should both sources fail, the bytes come from a SplitMix64 generator seeded
/// with the monotonic and wall clocks — fine for client ids and jitter, not
/// for keys (use ``systemRandomBytes(_:)`` when failure must be seen).
public func randomBytes(_ n: Int) -> [UInt8] {
    if let bytes = try? systemRandomBytes(n) { return bytes }
    if let bytes = try? FileIO.read(path: "/dev/urandom", exactly: n) { return bytes }
    var state = MonotonicClock.now() ^ UInt64(bitPattern: WallClock.now().seconds) &* 0x9E37_79B9_7F4A_7C15
    return (0..<n).map { _ in
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return UInt8(truncatingIfNeeded: z ^ (z >> 31))
    }
}
