// SPDX-License-Identifier: Apache-2.0
/// Latency samples in nanoseconds and their nearest-rank percentiles in
/// milliseconds. Value type; one thread.
struct LatencySamples {
    /// Every sample so far, in nanoseconds, in arrival order.
    private(set) var nanoseconds: [UInt64] = []
    /// Waits that gave up (no matching message within the timeout); not in the samples.
    var timeouts = 0

    /// Adds one sample.
    mutating func add(_ ns: UInt64) { nanoseconds.append(ns) }

    /// Adds every sample and timeout of `other`.
    mutating func merge(_ other: LatencySamples) {
        nanoseconds += other.nanoseconds
        timeouts += other.timeouts
    }

    /// The `p`-th percentile (0 < p ≤ 100, nearest rank) in ms; nil without samples.
    func percentileMilliseconds(_ p: Double) -> Double? {
        guard !nanoseconds.isEmpty else { return nil }
        let sorted = nanoseconds.sorted()
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return Double(sorted[min(max(rank, 1), sorted.count) - 1]) / 1e6
    }

    /// Reports `<name>_p50_ms` and `<name>_p99_ms`, and a stderr line with
    /// count, min, max and timeouts. Nothing but the note when empty.
    func report(_ name: String, to report: BenchReport) {
        guard let p50 = percentileMilliseconds(50), let p99 = percentileMilliseconds(99) else {
            report.note("\(name): no samples (\(timeouts) timeouts)")
            return
        }
        report.metric("\(name)_p50_ms", p50, unit: "ms")
        report.metric("\(name)_p99_ms", p99, unit: "ms")
        let least = Double(nanoseconds.min() ?? 0) / 1e6
        let most = Double(nanoseconds.max() ?? 0) / 1e6
        report.note("\(name): \(nanoseconds.count) samples, min \(least) ms, max \(most) ms, \(timeouts) timeouts")
    }
}
