// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport
import SpeakerCore
import SpeakerProtocol

/// The built binary as a systemd `Type=notify` service: readiness, watchdog,
/// status, SIGTERM timing, SIGHUP reload, and resuming from saved state.
/// Prints the measured figures as `{"metric",…}` lines.
@Suite(.serialized) struct LifecycleTests {
    func ms(_ from: UInt64, _ to: UInt64) -> Double { Double(to &- from) / 1e6 }

    @Test func readyWatchdogStatusResumeAndStop() throws {
        let closedPort = try FreePort.find()
        let daemon = try Daemon(brokerPort: closedPort, deviceID: "lifecycle")
        try #require(mkdir(daemon.stateDirectory, 0o755) == 0)
        try Files.writeText(daemon.statePath, #"{"version":1,"soundID":"pink","level":0.5,"intendsPlayback":true}"# + "\n")
        let notify = try NotifyListener(path: daemon.directory + "/notify.sock")
        try daemon.start(environment: [notify.environment, "WATCHDOG_USEC=300000"])

        // First audio frame, first audible frame: the saved intent resumes playback by itself.
        var firstFrame: UInt64?, firstSound: UInt64?
        let deadline = Monotonic.nanoseconds() + 20_000_000_000
        while firstSound == nil && Monotonic.nanoseconds() < deadline {
            let pcm = daemon.pcmHasSound()
            if firstFrame == nil && pcm.bytes > 0 { firstFrame = Monotonic.nanoseconds() }
            if pcm.sound { firstSound = Monotonic.nanoseconds() }
            Files.pause(milliseconds: 2)
        }
        let ready = notify.wait { $0.contains("READY=1") }
        try #require(ready != nil, "no READY=1:\n\(daemon.log)")
        try #require(firstSound != nil, "the saved intent should resume audible playback:\n\(daemon.log)")
        #expect(ready?.text.contains("STATUS=") == true)
        #expect(daemon.log.contains("restored sound \"pink\", level 0.5, playing"))
        print(#"{"metric":"startup_to_ready_ms","value":\#(ms(daemon.spawnedAt, ready!.at)),"unit":"ms"}"#)
        print(#"{"metric":"startup_to_first_audio_frame_ms","value":\#(ms(daemon.spawnedAt, firstFrame ?? firstSound!)),"unit":"ms"}"#)
        print(#"{"metric":"startup_to_first_audible_frame_ms","value":\#(ms(daemon.spawnedAt, firstSound!)),"unit":"ms"}"#)

        // READY came although no broker answers (MQTT may still be connecting).
        let playing = notify.wait { $0.contains("STATUS=playing \"pink\"") }
        // STATUS= names why MQTT is not connected once the first attempt has failed.
        #expect(playing?.text.contains("level 50%, MQTT connecting") == true
                || playing?.text.contains("level 50%, MQTT not connected: the broker's port refuses connections: Connection refused") == true,
                "\(notify.messages.map(\.text))")

        // Watchdog: WATCHDOG_USEC 300 ms → a ping every 150 ms from the main loop.
        notify.drain()
        let pingsBefore = notify.messages.filter { $0.text == "WATCHDOG=1" }.count
        for _ in 0..<12 {  // read as systemd would: a unix datagram queue holds only a few messages
            Files.pause(milliseconds: 100)
            notify.drain()
        }
        let pings = notify.messages.filter { $0.text == "WATCHDOG=1" }.count - pingsBefore
        #expect(pings >= 4 && pings <= 12, "\(pings) pings in 1.2 s")
        // A stopped loop stops pinging (systemd would restart it).
        daemon.process?.send(SIGSTOP)
        Files.pause(milliseconds: 100)
        notify.drain()
        let frozen = notify.messages.count
        Files.pause(milliseconds: 600)
        notify.drain()
        #expect(notify.messages.count == frozen, "no pings while the process is stopped")
        daemon.process?.send(SIGCONT)

        // SIGTERM: STOPPING=1, exit 0 within 2 s, intent and the new level saved (resume after reboot).
        #expect(try daemon.control("turn +2") == "ok")
        Files.pause(milliseconds: 100)
        notify.drain()  // a datagram receiver that never reads fills up (the speaker then drops, never blocks)
        let termAt = Monotonic.nanoseconds()
        daemon.process?.send(SIGTERM)
        let code = daemon.process?.waitForExit(timeout: 10)
        let stopMs = ms(termAt, Monotonic.nanoseconds())
        #expect(code == 0, "exit status; log:\n\(daemon.log)")
        #expect(stopMs < 2000, "stopped in \(stopMs) ms")
        print(#"{"metric":"sigterm_to_exit_ms_no_broker","value":\#(stopMs),"unit":"ms"}"#)
        #expect(notify.wait(timeout: 1) { $0.contains("STOPPING=1") } != nil)
        let saved = try PersistedState.decode(try Files.read(daemon.statePath))
        #expect(saved.soundID == "pink" && saved.intendsPlayback && (saved.level ?? 0) > 0.5, "shutdown flushes the last change: \(saved)")
        #expect(daemon.log.contains("saved \(saved.summary)"))
    }

    @Test func sigtermWithABrokerGoesOfflineAndExitsWithinTwoSeconds() throws {
        let broker = try TestBroker()
        let peer = try TestPeer(port: broker.port)
        try peer.connect()
        try peer.subscribe("ambient-speaker/stop/#")
        let daemon = try Daemon(brokerPort: broker.port, deviceID: "stop")
        var worst = 0.0
        for round in 0..<3 {
            peer.clear()
            try daemon.start()
            let root = daemon.topicRoot
            try #require(peer.waitForMessage(topic: "\(root)/availability", timeout: 20) { $0.payloadString == "online" } != nil,
                         "round \(round): never online:\n\(daemon.log)")
            try peer.publish(topic: "\(root)/command", string: #"{"id":"play-\#(round)","action":"play"}"#)
            let result = peer.waitForMessage(topic: "\(root)/command/result", timeout: 10) { $0.payloadString.contains("play-\(round)") }
            #expect(result?.payloadString.contains(#""ok":true"#) == true)
            peer.clear()
            let termAt = Monotonic.nanoseconds()
            daemon.process?.send(SIGTERM)
            let code = daemon.process?.waitForExit(timeout: 10)
            let stopMs = ms(termAt, Monotonic.nanoseconds())
            worst = max(worst, stopMs)
            #expect(code == 0, "round \(round): exit status; log:\n\(daemon.log)")
            #expect(stopMs < 2000, "round \(round): stopped in \(stopMs) ms")
            #expect(peer.waitForMessage(topic: "\(root)/availability", timeout: 5) { $0.payloadString == "offline" } != nil)
        }
        print(#"{"metric":"sigterm_to_exit_ms_playing_with_broker_worst_of_3","value":\#(worst),"unit":"ms"}"#)
    }

    @Test func sighupAppliesLiveKeysAndKeepsTheRunningConfigWhenInvalid() throws {
        let broker = try TestBroker()
        let peer = try TestPeer(port: broker.port)
        try peer.connect()
        try peer.subscribe("ambient-speaker/hup/#")
        let daemon = try Daemon(brokerPort: broker.port, deviceID: "hup")
        let notify = try NotifyListener(path: daemon.directory + "/notify.sock")
        try daemon.start(environment: [notify.environment])
        let root = daemon.topicRoot
        try #require(peer.waitForMessage(topic: "\(root)/availability", timeout: 20) { $0.payloadString == "online" } != nil, "never online:\n\(daemon.log)")

        // A valid change: maxLevel applies live (the level is clamped and republished), debounceMs needs a restart.
        try daemon.writeConfig(brokerPort: broker.port,
                               extraConfig: #""volume":{"maxLevel":0.3},"inputs":{"debounceMs":40}"#)
        peer.clear()
        daemon.process?.send(SIGHUP)
        let device = peer.waitForMessage(topic: "\(root)/device", timeout: 10) { $0.payloadString.contains(#""level":0.3"#) }
        #expect(device != nil, "maxLevel 0.3 should clamp the level 0.4 live:\n\(daemon.log)")
        #expect(daemon.waitForLog("configuration reloaded: applied ") && daemon.log.contains("volume.maxLevel"))
        #expect(daemon.waitForLog("inputs.debounceMs changed but cannot change while running"))
        #expect(notify.wait(timeout: 5) { $0.contains("RELOADING=1") } != nil)

        // An invalid file: an error naming the key, the running config stays, the speaker keeps working.
        try Files.writeText(daemon.configPath, #"{"volume":{"step":2}}"#)
        daemon.process?.send(SIGHUP)
        #expect(daemon.waitForLog("is invalid, keeping the running configuration"))
        #expect(daemon.log.contains("volume.step: must be in (0, 0.5], got 2"))
        #expect(notify.wait(timeout: 5) { $0.contains("config reload failed: volume.step") } != nil)
        #expect(daemon.process?.isRunning == true)
        try peer.publish(topic: "\(root)/command", string: #"{"id":"after-hup","action":"setVolume","level":0.9}"#)
        let result = peer.waitForMessage(topic: "\(root)/command/result", timeout: 10) { $0.payloadString.contains("after-hup") }
        #expect(result?.payloadString.contains(#""level":0.3"#) == true, "still clamped by the live maxLevel: \(result?.payloadString ?? "no result")")
        daemon.process?.send(SIGTERM)
        #expect(daemon.process?.waitForExit(timeout: 10) == 0)
    }
}
