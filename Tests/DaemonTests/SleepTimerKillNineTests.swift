// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport
import SpeakerCore

/// `kill -9` with a sleep timer running, set by holding the encoder's switch
/// on the simulated board: the state file holds the timer, and the next start
/// resumes it with the time left (wall clock synchronised) or counts it as
/// ended and does not resume playback (not synchronised). Both are the
/// contract; which one this machine shows depends on its clock.
@Suite(.serialized) struct SleepTimerKillNineTests {
    @Test func aTimerSurvivesKillNineWithTheTimeItHasLeft() throws {
        let closedPort = try FreePort.find()  // no broker needed
        let daemon = try Daemon(brokerPort: closedPort, deviceID: "kill9timer")
        try daemon.start()
        #expect(try daemon.control("hold encoderSwitch 900") == "ok")
        #expect(daemon.waitForLog("sleep timer: 15 min"), "\(daemon.log.suffix(2000))")
        // Wait for the write that holds the timer.
        var saved: PersistedState?
        let deadline = Monotonic.nanoseconds() + 20_000_000_000
        while Monotonic.nanoseconds() < deadline {
            if let bytes = try? Files.read(daemon.statePath), let state = try? PersistedState.decode(bytes), state.sleepTimer != nil {
                saved = state
                break
            }
            Files.pause(milliseconds: 50)
        }
        let timer = try #require(saved?.sleepTimer, "no state write with the timer:\n\(daemon.log.suffix(2000))")
        #expect(timer.minutes == 15 && timer.fadeSeconds == 300)
        #expect(saved?.intendsPlayback == true)
        daemon.process?.send(SIGKILL)
        #expect(daemon.process?.waitForExit(timeout: 10) == 128 + SIGKILL)

        try daemon.start()
        if timer.clockSynced {
            #expect(daemon.waitForLog("sleep timer resumes with"), "\(daemon.log.suffix(2000))")
            #expect(daemon.waitForLog("resuming \"white\""))
            print("kill -9 with a 15-minute timer: resumed with its time left (clock synchronised)")
        } else {
            #expect(daemon.waitForLog("the timer counts as ended and playback does not resume"), "\(daemon.log.suffix(2000))")
            print("kill -9 with a 15-minute timer: counted as ended (clock not synchronised on this machine)")
        }
        daemon.stop()
    }
}
