// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import Testing
import SpeakerSystem

/// The wall-clock step timer on the real kernel. Setting the clock needs
/// root and would disturb the whole machine, so the step itself is proven
/// in the HIL VM (Tests/HIL/guest/schedule.sh); here: the kernel accepts
/// the cancel-on-set timer, and with no step the descriptor stays quiet.
@Suite struct ClockStepTimerTests {
    @Test func aFreshTimerIsArmedAndQuietUntilTheClockIsSet() throws {
        let timer = try ClockStepTimer()
        #expect(timer.fd >= 0)
        var entry = pollfd(fd: timer.fd, events: Int16(POLLIN), revents: 0)
        #expect(poll(&entry, 1, 50) == 0, "readable with no step")
        #expect(timer.takeStep() == false)
        #expect(poll(&entry, 1, 0) == 0, "re-armed, still quiet")
    }
}
