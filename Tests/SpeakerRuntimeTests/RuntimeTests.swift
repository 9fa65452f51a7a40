// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import Testing
import SpeakerCore
import SpeakerSystem
import SpeakerRuntime
import SpeakerPorts

/// The runtime whole, on virtual time: start-up order, the path of a press
/// and of a command, timers, SIGHUP, SIGTERM and shutdown in reverse order —
/// exactly, without sleeps or slack.
@Suite struct RuntimeTests {
    @Test func startsInOrderAndStopsInReverse() throws {
        let h = try RuntimeHarness()
        try h.runtime.start()
        #expect(h.runtime.group.runningNames == ["systemd", "persistence", "audio", "board", "clock", "clock-sync", "mqtt"])
        #expect(h.trace.lines == ["audio.start", "control.open control", "mqtt.start"])
        #expect(h.audio.requests.first?.hasPrefix("gain ") == true, "the initial level on .start")
        #expect(Set(h.loop.watchedDescriptors) == [h.audio.reportFD, h.mqtt.eventFD, h.clockSteps.fd])

        h.trace.lines = []
        #expect(h.runtime.stop() == 0)
        #expect(h.trace.lines == ["mqtt.shutdown \(h.config.topicRoot)/availability=offline", "control.close",
                                  "audio.shutdown fade \(min(h.config.audio.fadeMs, AudioService.shutdownFadeLimitMs))"])
        #expect(h.runtime.group.runningNames.isEmpty)
        #expect(h.loop.watchedDescriptors.isEmpty, "every reader removed")
        #expect((try? FileIO.read(path: h.directory + "/state.json")) != nil, "shutdown writes the state")
    }

    @Test func aFailedStartStopsTheStartedServicesInReverse() throws {
        let h = try RuntimeHarness()
        h.mqtt.failStart = true
        #expect(throws: StartupError.self) { try h.runtime.start() }
        #expect(h.trace.lines == ["audio.start", "control.open control", "mqtt.start", "control.close",
                                  "audio.shutdown fade \(min(h.config.audio.fadeMs, AudioService.shutdownFadeLimitMs))"])
        #expect(h.runtime.group.runningNames.isEmpty)
    }

    /// A service whose start fails part-way releases what it opened itself (the
    /// group stops only the services started before it): a mixer element that
    /// does not open (real alsa-lib) stops the engine the audio service started.
    @Test func aMixerThatDoesNotOpenStopsTheEngineItStarted() throws {
        let h = try RuntimeHarness(mixer: (card: "ambient-speaker-no-such-card", element: "Master"))
        // do/catch, not #require(throws:)'s result: Swift 6.0's Testing returns none.
        do {
            try h.runtime.start()
            Issue.record("started with a mixer that does not exist")
        } catch {
            #expect(error.exitCode == 2)
            #expect(error.message.hasPrefix("volume.mixer: "), "\(error.message)")
        }
        #expect(h.trace.lines == ["audio.start", "audio.shutdown fade 0"])
        #expect(h.runtime.group.runningNames.isEmpty)
        #expect(h.loop.watchedDescriptors.isEmpty, "no reader left on the loop")
    }

    @Test func aPressPlaysOnceTheEngineConfirmsAndIsPublished() throws {
        let h = try RuntimeHarness()
        try h.runtime.start()
        h.deliver([.connected(sessionPresent: false)])
        #expect(h.published("availability") == ["online"])
        let sessionsBefore = h.published("session").count
        h.loop.runDueTimers()
        let reductionsBefore = h.runtime.reductions

        #expect(h.board.handle(command: "press playPause") == "ok")
        // The press: down now, up 50 ms later, each debounced on the core's deadline timer.
        h.loop.advanceTime(byMilliseconds: 200)
        let play = try #require(h.audio.requests.last { $0.hasPrefix("play") })
        #expect(h.published("event").last?.contains("\"gesture\":\"press\"") == true)
        #expect(!h.state.transport.session.isPlaying, "not playing until the engine says so")
        #expect(h.published("session").count == sessionsBefore, "nothing published before the engine confirms")

        let ticket = try #require(h.lastTicket)
        #expect(play.hasSuffix("ticket \(ticket)"))
        h.report([.playing(ticket: ticket)])
        #expect(h.state.transport.session.isPlaying)
        #expect(h.published("session").last?.contains("\"isPlaying\":true") == true)
        // ARCHITECTURE.md: down edge, the press-began tick (5 ms; play waits while paused), debounce tick,
        // up edge, debounce tick (the press: play), the engine's answer.
        let passes = h.runtime.reductions - reductionsBefore
        print("press path: \(passes) passes through reduce")
        #expect(passes == 6, "ARCHITECTURE.md counts these passes: update it with this number")
        _ = h.runtime.stop()
    }

    @Test func aSetVolumeCommandIsAppliedAndAnswered() throws {
        let h = try RuntimeHarness()
        try h.runtime.start()
        h.deliver([.connected(sessionPresent: false)])
        let command = #"{"id":"c1","action":"setVolume","level":0.25}"#
        h.loop.runDueTimers()
        let reductionsBefore = h.runtime.reductions
        h.deliver([.message(MQTTMessage(topic: "\(h.config.topicRoot)/command", payload: Array(command.utf8), qos: 1))])
        #expect(h.state.volume.level == .absolute(level: 0.25))
        #expect(h.audio.requests.last?.hasPrefix("gain ") == true && h.audio.requests.last?.hasSuffix("ramp 60") == true)
        let result = try #require(h.published("command/result").last)
        #expect(result.contains("\"id\":\"c1\"") && result.contains("\"ok\":true"), "\(result)")
        let passes = h.runtime.reductions - reductionsBefore
        print("setVolume path: \(passes) passes through reduce")
        // One for the command (software gain needs no confirmation; revisions come from the
        // reserved block), one when the broker's PUBACK for the result says it is no longer owed.
        #expect(passes == 2, "the command's pass and the result's acknowledgement")
        _ = h.runtime.stop()
    }

    @Test func stateIsSavedOnTheCoresTimerInVirtualTime() throws {
        let h = try RuntimeHarness()
        try h.runtime.start()
        let path = h.directory + "/state.json"
        let t0 = h.loop.now()
        h.loop.runDueTimers()  // READY=1 on the loop's first turn
        h.deliver([.message(MQTTMessage(topic: "\(h.config.topicRoot)/command",
                                        payload: Array(#"{"id":"c2","action":"setVolume","level":0.75}"#.utf8), qos: 1))])
        // A fresh device: the first save is due settleMs after start, with the new level.
        let deadline = t0 + UInt64(StateSaveSchedule.settleMs) * 1_000_000
        #expect(h.loop.nextDeadline == deadline, "the core armed its save timer")
        h.loop.advanceTime(to: deadline - 1)
        #expect((try? FileIO.read(path: path)) == nil, "not written before its deadline")
        h.loop.advanceTime(to: deadline)
        let saved = try PersistedState.decode(try FileIO.read(path: path))
        #expect(saved.level == 0.75)
        _ = h.runtime.stop()
    }

    @Test func aSoundWhoseFileIsGoneIsDecidedByTheCore() throws {
        let h = try RuntimeHarness(soundFiles: ["test-tone"])
        try h.runtime.start()
        #expect(h.state.transport.catalog.contains { $0.id == "test-tone" })
        unlink("\(h.config.audio.soundsDirectory)/test-tone.wav")
        h.deliver([.connected(sessionPresent: false)])
        let topic = "\(h.config.topicRoot)/command"
        h.deliver([.message(MQTTMessage(topic: topic, payload: Array(#"{"id":"s","action":"select","soundID":"test-tone"}"#.utf8), qos: 1))])
        h.deliver([.message(MQTTMessage(topic: topic, payload: Array(#"{"id":"p","action":"play"}"#.utf8), qos: 1))])
        // The audio service reported `.noSource`; the core logged it and asked the engine to play on with what it has.
        #expect(h.logs.entries.contains { $0.level == .error && $0.message.hasPrefix("sound \"test-tone\" cannot be played:") }, "\(h.published("command/result")) \(h.state.transport.selectedSound)")
        let ticket = try #require(h.lastTicket)
        #expect(h.audio.requests.last == "play nil fade \(h.config.audio.fadeMs) ticket \(ticket)")
        h.report([.playing(ticket: ticket)])
        #expect(h.state.transport.session.isPlaying, "the ticket is still answered")
        #expect(h.published("command/result").last?.contains("\"id\":\"p\"") == true)
        _ = h.runtime.stop()
    }

    @Test func sighupReloadsLiveKeysAndKeepsTheConfigOnAnInvalidFile() throws {
        let h = try RuntimeHarness()
        try h.runtime.start()
        var changed = h.config
        changed.volume.maxLevel = 0.3
        h.reloadResult = .success(changed)
        #expect(h.loop.raise(SIGHUP))
        #expect(h.state.config.volume.maxLevel == 0.3)
        #expect(h.logs.entries.contains { $0.message.contains("configuration reloaded") && $0.message.contains("volume.maxLevel") })

        h.reloadResult = .failure(ConfigError(path: "volume.step", message: "must be in (0, 0.5], got 2"))
        #expect(h.loop.raise(SIGHUP))
        #expect(h.state.config.volume.maxLevel == 0.3, "the running config is kept")
        #expect(h.logs.entries.contains { $0.message.contains("is invalid, keeping the running configuration") })
        #expect(h.loop.stopCount == 0)
        _ = h.runtime.stop()
    }

    @Test func sigtermStopsTheLoop() throws {
        let h = try RuntimeHarness()
        try h.runtime.start()
        #expect(h.loop.raise(SIGTERM))
        #expect(h.loop.stopCount == 1)
        #expect(h.runtime.stop() == 0)
    }

    @Test func theKnobStepsTheAmpOnExactPulses() throws {
        let h = try RuntimeHarness { config in
            config.volume.mode = .gpioStep
            config.volume.gpioStep.pulseMs = 20
            config.volume.gpioStep.gapMs = 30
        }
        try h.runtime.start()
        let t0 = h.loop.now()
        #expect(h.board.handle(command: "turn +2") == "ok")
        h.loop.advanceTime(byMilliseconds: 1_000)
        let pulses = try #require(h.board.simulated).pulseLog
        #expect(pulses.count == 2 && pulses.allSatisfy(\.up), "\(pulses)")
        let ms: UInt64 = 1_000_000
        #expect(pulses.map { ($0.end - $0.start) / ms } == [20, 20], "exactly pulseMs")
        if pulses.count == 2 { #expect(pulses[1].start - pulses[0].end == 30 * ms, "exactly gapMs") }
        #expect(pulses.first.map { $0.start > t0 } == true)
        _ = h.runtime.stop()
    }

    @Test func theStatusLedFollowsTheCoreThroughTheBoard() throws {
        let h = try RuntimeHarness { config in config.statusLed = StatusLedLine(line: "GPIO16") }
        try h.runtime.start()
        let board = try #require(h.board.simulated)
        #expect(board.ledLog.map(\.lit) == [false], "idle: dark")
        #expect(h.board.handle(command: "hold encoderSwitch 900") == "ok")
        h.loop.advanceTime(byMilliseconds: 1_000)  // the hold: play, a 15-minute timer, one blink
        h.loop.advanceTime(byMilliseconds: 5_000)  // then breathing
        let levels = board.ledLog.map(\.lit)
        #expect(levels.count >= 5 && levels.contains(true), "\(board.ledLog)")
        let ms: UInt64 = 1_000_000
        let spans = zip(board.ledLog, board.ledLog.dropFirst()).map { ($0.lit, ($1.at - $0.at) / ms) }
        #expect(spans.contains { $0.0 && $0.1 == 1500 }, "a breathing span lit for 1.5 s: \(spans)")
        _ = h.runtime.stop()
        #expect(board.ledLog.last?.lit == false, "dark once stopped")
    }
}
