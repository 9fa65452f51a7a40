// SPDX-License-Identifier: Apache-2.0
import SpeakerSystem

/// Times a piece of work several times on the monotonic clock and keeps the
/// median, so one descheduling or frequency step does not make the figure.
/// Calling thread.
enum RepeatedTiming {
    /// Runs `body` `repeats` times (at least once) and returns the median
    /// wall time in seconds together with the first run's result.
    static func median<Result>(repeats: Int, _ body: () -> Result) -> (seconds: Double, first: Result) {
        func timed() -> (UInt64, Result) {
            let start = MonotonicClock.now()
            let result = body()
            return (max(MonotonicClock.now() - start, 1), result)
        }
        let (firstDuration, first) = timed()
        var durations = [firstDuration]
        for _ in 1..<max(repeats, 1) { durations.append(timed().0) }
        durations.sort()
        return (Double(durations[durations.count / 2]) / 1e9, first)
    }
}
