// SPDX-License-Identifier: Apache-2.0
/// The wall-clock seam: a descriptor that becomes readable when the wall
/// clock is set (live: `ClockStepTimer`, a timerfd cancelled on clock
/// changes), so the runtime learns of a step without polling. Loop thread only.
public protocol WallClockSteps: AnyObject {
    /// The descriptor to watch for readability.
    var fd: Int32 { get }
    /// Consumes the readiness: true when the wall clock was set.
    func takeStep() -> Bool
}
