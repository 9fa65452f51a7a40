// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
import SpeakerProtocol
import Testing

/// Every command and every input, each checked against the WHOLE effect list
/// `reduce` returns and the whole visible state (``EffectAssertions``): a
/// publication added, dropped, reordered or changed in any field fails here.
/// `~/x` is `ambient-speaker/kitchen/x`.
@Suite struct ExhaustiveEffectTests {
    /// Started (revisions reserved) and connected, nothing played yet.
    static func ready(configure: (inout SpeakerConfig) -> Void = { _ in }) -> Harness {
        var h = Harness(configure: configure)
        h.send(.start(at: h.now))
        h.send(.mqttConnected(at: h.now))
        return h
    }

    /// The discovery publication's line for `speaker`: its content is pinned by
    /// HomeAssistantDiscoveryTests; these tests pin its place among the effects.
    static func discovery(_ speaker: Speaker) -> String {
        EffectLine.of(.publish(speaker.homeAssistantDiscovery.publication))
    }

    /// ``ready(configure:)``, then playing `white` (the engine confirmed it).
    static func playing(configure: (inout SpeakerConfig) -> Void = { _ in }) -> Harness {
        var h = ready(configure: configure)
        h.commandDone(#"{"id":"setup","action":"play"}"#)
        return h
    }

    // MARK: Life cycle and MQTT

    @Test func startThenTheReservationAnswer() {
        var h = Harness()
        h.assertEffects(of: .start(at: h.now), equal: [
            Self.discovery(h.speaker),  // first, before any state it describes (docs/mqtt-contract.md)
            #"audio setLevel(0.4)"#,
            #"publish ~/catalog qos1 retained [{"id":"white","name":"White noise","summary":"flat","kind":"sound"},{"id":"pink","name":"Pink noise","summary":"soft","kind":"sound"},{"id":"brown","name":"Brown noise","summary":"deep","kind":"sound"}]"#,
            #"publish ~/device qos1 retained {"id":"kitchen","name":"Ambient speaker (kitchen)","type":"speaker","volume":{"control":"absolute","level":0.4,"step":0.05,"maxLevel":1,"capSource":"config"},"muted":false,"audio":"ok","underruns":0,"software":"ambient-speaker test","epoch":"e1","nightCap":null}"#,
            #"publish ~/schedules qos1 retained {"rules":[],"clockSynced":true,"next":null}"#,
            #"reserveRevisions 1000"#,
        ])
        h.assertEffects(of: .revisionReservation(through: 1000, failure: nil, at: h.now), equal: [
            #"publish ~/session qos1 retained {"id":null,"soundID":"white","soundName":"White noise","layers":null,"isPlaying":false,"intendsPlayback":false,"updatedAt":"2026-11-29T12:00:00.123Z","clockSynced":true,"revision":1,"ended":true,"commands":["play","toggle","next","previous","select","setVolume","volumeUp","volumeDown","mute","setSchedules","setNightCap","saveMix"],"devices":[{"id":"kitchen","name":"Ambient speaker (kitchen)","type":"speaker","volume":{"control":"absolute","level":0.4,"step":0.05,"maxLevel":1,"capSource":"config"},"muted":false,"audio":"ok","underruns":0,"software":"ambient-speaker test","epoch":"e1","nightCap":null}],"sleepTimer":null}"#,
        ])
    }

    @Test func connectRepublishesEverythingAndDisconnectSaysNothing() {
        var h = Harness()
        h.send(.start(at: h.now))
        let republished = [
            Self.discovery(h.speaker),
            #"publish ~/device qos1 retained {"id":"kitchen","name":"Ambient speaker (kitchen)","type":"speaker","volume":{"control":"absolute","level":0.4,"step":0.05,"maxLevel":1,"capSource":"config"},"muted":false,"audio":"ok","underruns":0,"software":"ambient-speaker test","epoch":"e1","nightCap":null}"#,
            #"publish ~/catalog qos1 retained [{"id":"white","name":"White noise","summary":"flat","kind":"sound"},{"id":"pink","name":"Pink noise","summary":"soft","kind":"sound"},{"id":"brown","name":"Brown noise","summary":"deep","kind":"sound"}]"#,
            #"publish ~/schedules qos1 retained {"rules":[],"clockSynced":true,"next":null}"#,
            #"publish ~/session qos1 retained {"id":null,"soundID":"white","soundName":"White noise","layers":null,"isPlaying":false,"intendsPlayback":false,"updatedAt":"2026-11-29T12:00:00.123Z","clockSynced":true,"revision":1,"ended":true,"commands":["play","toggle","next","previous","select","setVolume","volumeUp","volumeDown","mute","setSchedules","setNightCap","saveMix"],"devices":[{"id":"kitchen","name":"Ambient speaker (kitchen)","type":"speaker","volume":{"control":"absolute","level":0.4,"step":0.05,"maxLevel":1,"capSource":"config"},"muted":false,"audio":"ok","underruns":0,"software":"ambient-speaker test","epoch":"e1","nightCap":null}],"sleepTimer":null}"#,
            #"publish ~/availability qos1 retained online"#,
        ]
        h.assertEffects(of: .mqttConnected(at: h.now), equal: republished, state: { $0.mqttConnected = true })
        h.assertEffects(of: .mqttDisconnected(at: h.now), equal: [], state: { $0.mqttConnected = false })
        // A reconnection publishes the same again (retained copies may be lost with a restarted broker).
        h.assertEffects(of: .mqttConnected(at: h.now), equal: republished, state: { $0.mqttConnected = true })
    }

    @Test func brokerProblemAndRetainedSessionEvidence() {
        var h = Self.ready()
        h.assertEffects(of: .mqttProblem(ConnectionProblem(kind: .loginRejected, detail: "not authorised"), at: h.now), equal: [
            #"log warning not connected to the broker: the broker rejected the login: not authorised"#,
        ], state: { $0.brokerProblem = ConnectionProblem(kind: .loginRejected, detail: "not authorised") })
        h.assertEffects(of: .retainedSessionSeen(Array(#"{"id":null}"#.utf8), otherPublisher: true, at: h.now), equal: [])
    }

    @Test func shutdownWritesUnsavedState() {
        var h = Self.playing()
        h.assertEffects(of: .shutdown(at: h.now), equal: [
            #"saveState PersistedState(soundID: "white", level: Optional(0.4), intendsPlayback: true, sleepTimer: nil, schedule: SpeakerCore.PersistedSchedule(rules: nil, nightCap: nil, firedThrough: nil))"#,
        ])
    }

    @Test func reconfigureWithALiveKeyChanged() {
        var h = Self.ready()
        var config = h.speaker.config
        config.volume.step = 0.1
        var reloaded = h.speaker
        _ = reloaded.reduce(.reconfigure(config, at: h.now))
        h.assertEffects(of: .reconfigure(config, at: h.now), equal: [
            Self.discovery(reloaded),
            #"log notice configuration reloaded: applied volume.step"#,
            #"publish ~/device qos1 retained {"id":"kitchen","name":"Ambient speaker (kitchen)","type":"speaker","volume":{"control":"absolute","level":0.4,"step":0.1,"maxLevel":1,"capSource":"config"},"muted":false,"audio":"ok","underruns":0,"software":"ambient-speaker test","epoch":"e1","nightCap":null}"#,
            #"publish ~/session qos1 retained {"id":null,"soundID":"white","soundName":"White noise","layers":null,"isPlaying":false,"intendsPlayback":false,"updatedAt":"2026-11-29T12:00:00.123Z","clockSynced":true,"revision":2,"ended":true,"commands":["play","toggle","next","previous","select","setVolume","volumeUp","volumeDown","mute","setSchedules","setNightCap","saveMix"],"devices":[{"id":"kitchen","name":"Ambient speaker (kitchen)","type":"speaker","volume":{"control":"absolute","level":0.4,"step":0.1,"maxLevel":1,"capSource":"config"},"muted":false,"audio":"ok","underruns":0,"software":"ambient-speaker test","epoch":"e1","nightCap":null}],"sleepTimer":null}"#,
        ])
    }

    // MARK: Commands

    @Test func playThenTheEngineConfirms() {
        var h = Self.ready()
        h.assertCommand(#"{"id":"c1","action":"play"}"#, equal: [
            #"saveJournal held ["c1"] owed [] answered 0"#,
            #"log info session session-1 started"#,
            #"audio play(soundID: "white", fadeMs: 400, ticket: 1)"#,
        ], state: { $0.session.id = "session-1"; $0.session.isActive = true; $0.session.intendsPlayback = true; $0.outstanding = [1: "c1"]; $0.nextTicket = 2 })
        h.assertEffects(of: .engine(.playing(ticket: 1), at: h.now), equal: [
            #"saveJournal held [] owed ["c1"] answered 1"#,
            #"publish ~/command/result qos1 {"id":"c1","ok":true,"revision":2}"#,
            #"publish ~/session qos1 retained {"id":"session-1","soundID":"white","soundName":"White noise","layers":null,"isPlaying":true,"intendsPlayback":true,"updatedAt":"2026-11-29T12:00:00.123Z","clockSynced":true,"revision":2,"ended":false,"commands":["pause","toggle","stop","next","previous","select","setVolume","volumeUp","volumeDown","setSleepTimer","mute","setSchedules","setNightCap","saveMix"],"devices":[{"id":"kitchen","name":"Ambient speaker (kitchen)","type":"speaker","volume":{"control":"absolute","level":0.4,"step":0.05,"maxLevel":1,"capSource":"config"},"muted":false,"audio":"ok","underruns":0,"software":"ambient-speaker test","epoch":"e1","nightCap":null}],"sleepTimer":null}"#,
        ], state: { $0.session.isPlaying = true; $0.outstanding = [:] })
    }

    /// `pause`, and `toggle` while playing, do the same.
    @Test(arguments: ["pause", "toggle"]) func pauseThenTheEngineConfirms(action: String) {
        var h = Self.playing()
        let now = h.now
        h.assertCommand(#"{"id":"c2","action":"\#(action)"}"#, equal: [
            #"saveJournal held ["c2"] owed ["setup"] answered 1"#,
            #"audio pause(fadeMs: 400, ticket: 2)"#,
        ], state: { $0.session.intendsPlayback = false; $0.session.pausedSince = now; $0.outstanding = [2: "c2"]; $0.nextTicket = 3 })
        h.assertEffects(of: .engine(.paused(ticket: 2), at: h.now), equal: [
            #"saveJournal held [] owed ["c2"] answered 2"#,
            #"publish ~/command/result qos1 {"id":"c2","ok":true,"revision":3}"#,
            #"publish ~/session qos1 retained {"id":"session-1","soundID":"white","soundName":"White noise","layers":null,"isPlaying":false,"intendsPlayback":false,"updatedAt":"2026-11-29T12:00:00.123Z","clockSynced":true,"revision":3,"ended":false,"commands":["play","toggle","stop","next","previous","select","setVolume","volumeUp","volumeDown","mute","setSchedules","setNightCap","saveMix"],"devices":[{"id":"kitchen","name":"Ambient speaker (kitchen)","type":"speaker","volume":{"control":"absolute","level":0.4,"step":0.05,"maxLevel":1,"capSource":"config"},"muted":false,"audio":"ok","underruns":0,"software":"ambient-speaker test","epoch":"e1","nightCap":null}],"sleepTimer":null}"#,
        ], state: { $0.session.isPlaying = false; $0.outstanding = [:] })
    }

    @Test func stopEndsTheSession() {
        var h = Self.playing()
        h.assertCommand(#"{"id":"c4","action":"stop"}"#, equal: [
            #"saveJournal held ["c4"] owed ["setup"] answered 1"#,
            #"audio pause(fadeMs: 400, ticket: 2)"#,
        ], state: { $0.session.isActive = false; $0.session.intendsPlayback = false; $0.outstanding = [2: "c4"]; $0.nextTicket = 3 })
    }

    @Test func nextAndPreviousWhilePlaying() {
        var h = Self.playing()
        h.assertCommand(#"{"id":"c5","action":"next"}"#, equal: [
            #"saveJournal held ["c5"] owed ["setup"] answered 1"#,
            #"audio switchTo(soundID: "pink", crossfadeMs: 1500, ticket: 2)"#,
        ], state: { $0.selected = "pink"; $0.outstanding = [2: "c5"]; $0.nextTicket = 3 })
        h.assertCommand(#"{"id":"c6","action":"previous"}"#, equal: [
            #"saveJournal held ["c5", "c6"] owed [] answered 1"#,
            #"audio switchTo(soundID: "white", crossfadeMs: 1500, ticket: 3)"#,
        ], state: { $0.selected = "white"; $0.outstanding[3] = "c6"; $0.nextTicket = 4 })
    }

    @Test func selectWhileStoppedStartsASessionWithThatSound() {
        var h = Self.ready()
        h.assertCommand(#"{"id":"c7","action":"select","soundID":"brown"}"#, equal: [
            #"saveJournal held ["c7"] owed [] answered 0"#,
            #"log info session session-1 started"#,
            #"audio play(soundID: "brown", fadeMs: 400, ticket: 1)"#,
        ], state: {
            $0.selected = "brown"
            $0.session.id = "session-1"; $0.session.isActive = true; $0.session.intendsPlayback = true
            $0.outstanding = [1: "c7"]; $0.nextTicket = 2
        })
    }

    @Test func setVolumeUpAndDown() {
        var h = Self.ready()
        h.assertCommand(#"{"id":"c8","action":"setVolume","level":0.7}"#, equal: [
            #"saveJournal held [] owed ["c8"] answered 1"#,
            #"audio setLevel(0.7)"#,
            #"publish ~/command/result qos1 {"id":"c8","ok":true,"revision":2,"level":0.7}"#,
            #"publish ~/device qos1 retained {"id":"kitchen","name":"Ambient speaker (kitchen)","type":"speaker","volume":{"control":"absolute","level":0.7,"step":0.05,"maxLevel":1,"capSource":"config"},"muted":false,"audio":"ok","underruns":0,"software":"ambient-speaker test","epoch":"e1","nightCap":null}"#,
            #"publish ~/session qos1 retained {"id":null,"soundID":"white","soundName":"White noise","layers":null,"isPlaying":false,"intendsPlayback":false,"updatedAt":"2026-11-29T12:00:00.123Z","clockSynced":true,"revision":2,"ended":true,"commands":["play","toggle","next","previous","select","setVolume","volumeUp","volumeDown","mute","setSchedules","setNightCap","saveMix"],"devices":[{"id":"kitchen","name":"Ambient speaker (kitchen)","type":"speaker","volume":{"control":"absolute","level":0.7,"step":0.05,"maxLevel":1,"capSource":"config"},"muted":false,"audio":"ok","underruns":0,"software":"ambient-speaker test","epoch":"e1","nightCap":null}],"sleepTimer":null}"#,
        ], state: { $0.volume = .absolute(level: 0.7) })
        h.assertCommand(#"{"id":"c9","action":"volumeUp","steps":2}"#, equal: [
            #"saveJournal held [] owed ["c9"] answered 2"#,
            #"audio setLevel(0.8)"#,
            #"publish ~/command/result qos1 {"id":"c9","ok":true,"revision":3,"level":0.8}"#,
            #"publish ~/device qos1 retained {"id":"kitchen","name":"Ambient speaker (kitchen)","type":"speaker","volume":{"control":"absolute","level":0.8,"step":0.05,"maxLevel":1,"capSource":"config"},"muted":false,"audio":"ok","underruns":0,"software":"ambient-speaker test","epoch":"e1","nightCap":null}"#,
            #"publish ~/session qos1 retained {"id":null,"soundID":"white","soundName":"White noise","layers":null,"isPlaying":false,"intendsPlayback":false,"updatedAt":"2026-11-29T12:00:00.123Z","clockSynced":true,"revision":3,"ended":true,"commands":["play","toggle","next","previous","select","setVolume","volumeUp","volumeDown","mute","setSchedules","setNightCap","saveMix"],"devices":[{"id":"kitchen","name":"Ambient speaker (kitchen)","type":"speaker","volume":{"control":"absolute","level":0.8,"step":0.05,"maxLevel":1,"capSource":"config"},"muted":false,"audio":"ok","underruns":0,"software":"ambient-speaker test","epoch":"e1","nightCap":null}],"sleepTimer":null}"#,
        ], state: { $0.volume = .absolute(level: 0.8) })
        h.assertCommand(#"{"id":"c10","action":"volumeDown"}"#, equal: [
            #"saveJournal held [] owed ["c10"] answered 3"#,
            #"audio setLevel(0.75)"#,
            #"publish ~/command/result qos1 {"id":"c10","ok":true,"revision":4,"level":0.75}"#,
            #"publish ~/device qos1 retained {"id":"kitchen","name":"Ambient speaker (kitchen)","type":"speaker","volume":{"control":"absolute","level":0.75,"step":0.05,"maxLevel":1,"capSource":"config"},"muted":false,"audio":"ok","underruns":0,"software":"ambient-speaker test","epoch":"e1","nightCap":null}"#,
            #"publish ~/session qos1 retained {"id":null,"soundID":"white","soundName":"White noise","layers":null,"isPlaying":false,"intendsPlayback":false,"updatedAt":"2026-11-29T12:00:00.123Z","clockSynced":true,"revision":4,"ended":true,"commands":["play","toggle","next","previous","select","setVolume","volumeUp","volumeDown","mute","setSchedules","setNightCap","saveMix"],"devices":[{"id":"kitchen","name":"Ambient speaker (kitchen)","type":"speaker","volume":{"control":"absolute","level":0.75,"step":0.05,"maxLevel":1,"capSource":"config"},"muted":false,"audio":"ok","underruns":0,"software":"ambient-speaker test","epoch":"e1","nightCap":null}],"sleepTimer":null}"#,
        ], state: { $0.volume = .absolute(level: 0.75) })
    }

    @Test func aReplyGoesToTheResponseTopicWithTheCorrelationData() {
        var h = Self.ready()
        h.assertCommand(#"{"id":"c11","action":"setVolume","level":0.5}"#, responseTopic: "phone/replies", correlation: [1, 2, 3],
                        equal: [
                            #"saveJournal held [] owed ["c11"] answered 1"#,
                            #"audio setLevel(0.5)"#,
                            #"publish ~/command/result qos1 {"id":"c11","ok":true,"revision":2,"level":0.5}"#,
                            #"publish phone/replies qos1 correlation [1, 2, 3] {"id":"c11","ok":true,"revision":2,"level":0.5}"#,
                            #"publish ~/device qos1 retained {"id":"kitchen","name":"Ambient speaker (kitchen)","type":"speaker","volume":{"control":"absolute","level":0.5,"step":0.05,"maxLevel":1,"capSource":"config"},"muted":false,"audio":"ok","underruns":0,"software":"ambient-speaker test","epoch":"e1","nightCap":null}"#,
                            #"publish ~/session qos1 retained {"id":null,"soundID":"white","soundName":"White noise","layers":null,"isPlaying":false,"intendsPlayback":false,"updatedAt":"2026-11-29T12:00:00.123Z","clockSynced":true,"revision":2,"ended":true,"commands":["play","toggle","next","previous","select","setVolume","volumeUp","volumeDown","mute","setSchedules","setNightCap","saveMix"],"devices":[{"id":"kitchen","name":"Ambient speaker (kitchen)","type":"speaker","volume":{"control":"absolute","level":0.5,"step":0.05,"maxLevel":1,"capSource":"config"},"muted":false,"audio":"ok","underruns":0,"software":"ambient-speaker test","epoch":"e1","nightCap":null}],"sleepTimer":null}"#,
                        ], state: { $0.volume = .absolute(level: 0.5) })
    }

    @Test func rejectedCommands() {
        var h = Self.ready()
        h.assertCommand("not json", equal: [
            #"log notice command rejected (malformed): not JSON: unexpected character at byte 0"#,
            #"publish ~/command/result qos1 {"id":null,"ok":false,"error":{"code":"malformed","message":"not JSON: unexpected character at byte 0"}}"#,
        ])
        h.assertCommand(#"{"id":"c12","action":"dance"}"#, equal: [
            #"saveJournal held [] owed ["c12"] answered 1"#,
            #"log notice command rejected (unknown-action): action: unknown action "dance"; expected one of play, pause, toggle, stop, next, previous, select, setVolume, volumeUp, volumeDown, setSchedules, setScheduleEnabled, setNightCap, saveMix, deleteMix, setLayerLevel, setSleepTimer, cancelSleepTimer, mute, unmute"#,
            #"publish ~/command/result qos1 {"id":"c12","ok":false,"error":{"code":"unknown-action","message":"action: unknown action \"dance\"; expected one of play, pause, toggle, stop, next, previous, select, setVolume, volumeUp, volumeDown, setSchedules, setScheduleEnabled, setNightCap, saveMix, deleteMix, setLayerLevel, setSleepTimer, cancelSleepTimer, mute, unmute"}}"#,
        ])
        h.assertCommand(#"{"id":"c13","action":"select","soundID":"thunder"}"#, equal: [
            #"saveJournal held [] owed ["c13"] answered 2"#,
            #"log notice command c13 select rejected (unknown-sound): no sound "thunder" in the catalog"#,
            #"publish ~/command/result qos1 {"id":"c13","ok":false,"error":{"code":"unknown-sound","message":"no sound \"thunder\" in the catalog"}}"#,
        ])
        h.assertCommand(#"{"id":"c14","action":"play"}"#, retained: true, equal: [
            #"log warning ignoring a retained message on ambient-speaker/kitchen/command (a retained command would run again at every start); clear it with an empty retained publish to that topic"#,
        ], state: { $0.retainedCommandsIgnored = 1 })
    }

    @Test func stepOnlyVolumeRefusesSetVolumeAndPulsesTheAmp() {
        var h = Self.ready { $0.volume.mode = .gpioStep }
        h.assertCommand(#"{"id":"c15","action":"setVolume","level":0.5}"#, equal: [
            #"saveJournal held [] owed ["c15"] answered 1"#,
            #"log notice command c15 setVolume rejected (unsupported): this speaker's volume is step-only (relative); use volumeUp/volumeDown"#,
            #"publish ~/command/result qos1 {"id":"c15","ok":false,"error":{"code":"unsupported","message":"this speaker's volume is step-only (relative); use volumeUp/volumeDown"}}"#,
        ])
        h.assertCommand(#"{"id":"c16","action":"volumeUp","steps":3}"#, equal: [
            #"saveJournal held [] owed ["c16"] answered 2"#,
            #"amp up(count: 3)"#,
            #"publish ~/command/result qos1 {"id":"c16","ok":true,"revision":1}"#,
        ])
        h.assertCommand(#"{"id":"c17","action":"volumeDown","steps":1}"#, equal: [
            #"saveJournal held [] owed ["c17"] answered 3"#,
            #"amp down(count: 1)"#,
            #"publish ~/command/result qos1 {"id":"c17","ok":true,"revision":1}"#,
        ])
    }

    @Test func mixerVolumeWaitsForTheMixer() {
        var h = Self.ready { $0.volume.mode = .alsaMixer }
        h.assertCommand(#"{"id":"c18","action":"setVolume","level":0.6}"#, equal: [
            #"saveJournal held ["c18"] owed [] answered 0"#,
            #"audio setMixerLevel(0.6, ticket: 2)"#,
        ], state: { $0.pendingLevels = [2: 0.6]; $0.nextTicket = 3 })
        h.assertEffects(of: .engine(.levelSet(ticket: 2), at: h.now), equal: [
            #"saveJournal held [] owed ["c18"] answered 1"#,
            #"publish ~/command/result qos1 {"id":"c18","ok":true,"revision":2,"level":0.6}"#,
            #"publish ~/device qos1 retained {"id":"kitchen","name":"Ambient speaker (kitchen)","type":"speaker","volume":{"control":"absolute","level":0.6,"step":0.05,"maxLevel":1,"capSource":"config"},"muted":false,"audio":"ok","underruns":0,"software":"ambient-speaker test","epoch":"e1","nightCap":null}"#,
            #"publish ~/session qos1 retained {"id":null,"soundID":"white","soundName":"White noise","layers":null,"isPlaying":false,"intendsPlayback":false,"updatedAt":"2026-11-29T12:00:00.123Z","clockSynced":true,"revision":2,"ended":true,"commands":["play","toggle","next","previous","select","setVolume","volumeUp","volumeDown","mute","setSchedules","setNightCap","saveMix"],"devices":[{"id":"kitchen","name":"Ambient speaker (kitchen)","type":"speaker","volume":{"control":"absolute","level":0.6,"step":0.05,"maxLevel":1,"capSource":"config"},"muted":false,"audio":"ok","underruns":0,"software":"ambient-speaker test","epoch":"e1","nightCap":null}],"sleepTimer":null}"#,
        ], state: { $0.volume = .absolute(level: 0.6); $0.pendingLevels = [:] })
        h.assertCommand(#"{"id":"c19","action":"setVolume","level":0.9}"#, equal: [
            #"saveJournal held ["c19"] owed ["c18"] answered 1"#,
            #"audio setMixerLevel(0.9, ticket: 3)"#,
        ], state: { $0.pendingLevels = [3: 0.9]; $0.nextTicket = 4 })
        h.assertEffects(of: .engine(.levelFailed(ticket: 3, reason: "EIO", actual: 0.55), at: h.now), equal: [
            #"saveJournal held [] owed ["c19"] answered 2"#,
            #"log error volume: the mixer did not take level 0.9: EIO"#,
            #"publish ~/command/result qos1 {"id":"c19","ok":false,"error":{"code":"audio-unavailable","message":"the mixer did not take level 0.9: EIO"}}"#,
            #"publish ~/device qos1 retained {"id":"kitchen","name":"Ambient speaker (kitchen)","type":"speaker","volume":{"control":"absolute","level":0.55,"step":0.05,"maxLevel":1,"capSource":"config"},"muted":false,"audio":"ok","underruns":0,"software":"ambient-speaker test","epoch":"e1","nightCap":null}"#,
            #"publish ~/session qos1 retained {"id":null,"soundID":"white","soundName":"White noise","layers":null,"isPlaying":false,"intendsPlayback":false,"updatedAt":"2026-11-29T12:00:00.123Z","clockSynced":true,"revision":3,"ended":true,"commands":["play","toggle","next","previous","select","setVolume","volumeUp","volumeDown","mute","setSchedules","setNightCap","saveMix"],"devices":[{"id":"kitchen","name":"Ambient speaker (kitchen)","type":"speaker","volume":{"control":"absolute","level":0.55,"step":0.05,"maxLevel":1,"capSource":"config"},"muted":false,"audio":"ok","underruns":0,"software":"ambient-speaker test","epoch":"e1","nightCap":null}],"sleepTimer":null}"#,
        ], state: { $0.volume = .absolute(level: 0.55); $0.pendingLevels = [:] })
    }

    // MARK: Engine reports

    @Test func deviceLostAndBackAndUnderruns() {
        var h = Self.playing()
        h.assertEffects(of: .engine(.unavailable(reason: "unplugged"), at: h.now), equal: [
            #"log warning audio output unavailable: unplugged"#,
            #"publish ~/device qos1 retained {"id":"kitchen","name":"Ambient speaker (kitchen)","type":"speaker","volume":{"control":"absolute","level":0.4,"step":0.05,"maxLevel":1,"capSource":"config"},"muted":false,"audio":"unavailable","underruns":0,"software":"ambient-speaker test","epoch":"e1","nightCap":null}"#,
            #"publish ~/session qos1 retained {"id":"session-1","soundID":"white","soundName":"White noise","layers":null,"isPlaying":false,"intendsPlayback":true,"updatedAt":"2026-11-29T12:00:00.123Z","clockSynced":true,"revision":3,"ended":false,"commands":["pause","toggle","stop","setVolume","volumeUp","volumeDown","setSleepTimer","mute","setSchedules","setNightCap","saveMix"],"devices":[{"id":"kitchen","name":"Ambient speaker (kitchen)","type":"speaker","volume":{"control":"absolute","level":0.4,"step":0.05,"maxLevel":1,"capSource":"config"},"muted":false,"audio":"unavailable","underruns":0,"software":"ambient-speaker test","epoch":"e1","nightCap":null}],"sleepTimer":null}"#,
        ], state: { $0.audio = .unavailable; $0.session.isPlaying = false })
        h.assertEffects(of: .engine(.available, at: h.now), equal: [
            #"log info audio output is back; resuming playback"#,
            #"audio play(soundID: "white", fadeMs: 400, ticket: 2)"#,
        ], state: { $0.audio = .ok; $0.outstanding = [2: nil]; $0.nextTicket = 3 })
        h.assertEffects(of: .engine(.underruns(total: 3), at: h.now), equal: [], state: { $0.underruns = 3 })
    }

    @Test func mixerMovedElsewhere() {
        var h = Self.ready { $0.volume.mode = .alsaMixer }
        h.assertEffects(of: .engine(.mixerReading(db: -30, level: 0.25, ownWrite: false), at: h.now), equal: [
            #"log info volume: mixer moved elsewhere to -30.0 dB (level 0.25)"#,
            #"publish ~/device qos1 retained {"id":"kitchen","name":"Ambient speaker (kitchen)","type":"speaker","volume":{"control":"absolute","level":0.25,"step":0.05,"maxLevel":1,"capSource":"config"},"muted":false,"audio":"ok","underruns":0,"software":"ambient-speaker test","epoch":"e1","nightCap":null}"#,
            #"publish ~/session qos1 retained {"id":null,"soundID":"white","soundName":"White noise","layers":null,"isPlaying":false,"intendsPlayback":false,"updatedAt":"2026-11-29T12:00:00.123Z","clockSynced":true,"revision":2,"ended":true,"commands":["play","toggle","next","previous","select","setVolume","volumeUp","volumeDown","mute","setSchedules","setNightCap","saveMix"],"devices":[{"id":"kitchen","name":"Ambient speaker (kitchen)","type":"speaker","volume":{"control":"absolute","level":0.25,"step":0.05,"maxLevel":1,"capSource":"config"},"muted":false,"audio":"ok","underruns":0,"software":"ambient-speaker test","epoch":"e1","nightCap":null}],"sleepTimer":null}"#,
        ], state: { $0.volume = .absolute(level: 0.25); $0.lastMixerReading = .some(-30) })
    }

    // MARK: Buttons, knob, ticks

    /// While paused, play/pause plays when the press begins (5 ms after its
    /// first edge); the release only publishes the gesture.
    @Test func playPausePressTogglesAndPublishesTheEvent() {
        var h = Self.ready()
        h.assertEffects(of: .lineEdge(LineEdge(line: .playPause, isActive: true, at: h.now)), equal: [])
        h.now = h.now.advanced(byMilliseconds: 5)
        h.assertEffects(of: .tick(h.now), equal: [
            #"log info session session-1 started"#,
            #"audio play(soundID: "white", fadeMs: 400, ticket: 1)"#,
        ], state: { $0.session.id = "session-1"; $0.session.isActive = true; $0.session.intendsPlayback = true; $0.outstanding = [1: nil]; $0.nextTicket = 2; $0.actedOnDown = [.playPause] })
        h.now = h.now.advanced(byMilliseconds: 95)
        h.assertEffects(of: .lineEdge(LineEdge(line: .playPause, isActive: false, at: h.now)), equal: [])
        h.now = h.now.advanced(byMilliseconds: 100)
        h.assertEffects(of: .tick(h.now), equal: [
            #"publish ~/event qos0 {"source":"button","name":"playPause","gesture":"press"}"#,
        ], state: { $0.actedOnDown = [] })
    }

    /// While playing, play/pause acts when the press begins (5 ms after its
    /// first edge: it pauses); held on to `long`, it stops and ends the session.
    @Test func playPauseLongStops() {
        var h = Self.playing()
        h.assertEffects(of: .lineEdge(LineEdge(line: .playPause, isActive: true, at: h.now)), equal: [])
        h.now = h.now.advanced(byMilliseconds: 5)
        let down = h.now
        h.assertEffects(of: .tick(h.now), equal: [
            #"audio pause(fadeMs: 400, ticket: 2)"#,
        ], state: { $0.session.intendsPlayback = false; $0.session.pausedSince = down; $0.outstanding = [2: nil]; $0.nextTicket = 3; $0.actedOnDown = [.playPause] })
        h.now = h.now.advanced(byMilliseconds: 895)
        h.assertEffects(of: .tick(h.now), equal: [
            #"publish ~/event qos0 {"source":"button","name":"playPause","gesture":"long"}"#,
            #"audio pause(fadeMs: 400, ticket: 3)"#,
            #"saveState PersistedState(soundID: "white", level: Optional(0.4), intendsPlayback: false, sleepTimer: nil, schedule: SpeakerCore.PersistedSchedule(rules: nil, nightCap: nil, firedThrough: nil))"#,
        ], state: { $0.session.isActive = false; $0.session.pausedSince = nil; $0.outstanding[3] = .some(nil); $0.nextTicket = 4; $0.actedOnDown = [] })
    }

    /// next, previous and the encoder switch (no long or double meaning
    /// configured for them) act when the press begins, 5 ms after the first
    /// edge; the release only publishes the gesture.
    @Test func nextPreviousAndEncoderSwitchPresses() {
        var h = Self.playing()
        let presses: [(InputLine, String, [String], (inout VisibleState) -> Void)] = [
            (.next, "next", [#"audio switchTo(soundID: "pink", crossfadeMs: 1500, ticket: 2)"#], {
                $0.selected = "pink"; $0.outstanding[2] = .some(nil); $0.nextTicket = 3; $0.actedOnDown = [.next]
            }),
            (.previous, "previous", [#"audio switchTo(soundID: "white", crossfadeMs: 1500, ticket: 3)"#], {
                $0.selected = "white"; $0.outstanding[3] = .some(nil); $0.nextTicket = 4; $0.actedOnDown = [.previous]
            }),
        ]
        for (line, name, actions, change) in presses {
            h.assertEffects(of: .lineEdge(LineEdge(line: line, isActive: true, at: h.now)), equal: [])
            h.now = h.now.advanced(byMilliseconds: 5)
            h.assertEffects(of: .tick(h.now), equal: actions, state: change)
            _ = h.edge(line, false, afterMs: 95)
            h.now = h.now.advanced(byMilliseconds: 100)
            h.assertEffects(of: .tick(h.now), equal: [
                #"publish ~/event qos0 {"source":"button","name":"\#(name)","gesture":"press"}"#,
            ], state: { $0.actedOnDown = [] })
        }
        h.assertEffects(of: .lineEdge(LineEdge(line: .encoderSwitch, isActive: true, at: h.now)), equal: [])
        h.now = h.now.advanced(byMilliseconds: 5)
        // The encoder's switch acts on release: its hold is the sleep timer's gesture.
        h.assertEffects(of: .tick(h.now), equal: [])
        _ = h.edge(.encoderSwitch, false, afterMs: 95)
        h.now = h.now.advanced(byMilliseconds: 100)
        let released = h.now
        h.assertEffects(of: .tick(h.now), equal: [
            #"publish ~/event qos0 {"source":"button","name":"encoderSwitch","gesture":"press"}"#,
            #"audio pause(fadeMs: 400, ticket: 4)"#,
        ], state: { $0.session.intendsPlayback = false; $0.session.pausedSince = released; $0.outstanding[4] = .some(nil); $0.nextTicket = 5 })
    }

    @Test func aDoublePressOnlyPublishesTheEvent() {
        var h = Self.ready { $0.inputs.doublePressMs = 300 }
        for _ in 0..<2 {
            h.edge(.next, true, afterMs: 50)
            h.edge(.next, false, afterMs: 50)
        }
        h.now = h.now.advanced(byMilliseconds: 50)
        h.assertEffects(of: .tick(h.now), equal: [
            #"publish ~/event qos0 {"source":"button","name":"next","gesture":"double"}"#,
        ])
    }

    @Test func aKnobDetentEachWay() {
        var h = Self.ready()
        let clockwise = h.startDetent(clockwise: true)
        h.assertEffects(of: .lineEdge(clockwise), equal: [
            #"publish ~/event qos0 {"source":"knob","delta":1}"#,
            #"audio setLevel(0.45)"#,
            #"publish ~/device qos1 retained {"id":"kitchen","name":"Ambient speaker (kitchen)","type":"speaker","volume":{"control":"absolute","level":0.45,"step":0.05,"maxLevel":1,"capSource":"config"},"muted":false,"audio":"ok","underruns":0,"software":"ambient-speaker test","epoch":"e1","nightCap":null}"#,
            #"publish ~/session qos1 retained {"id":null,"soundID":"white","soundName":"White noise","layers":null,"isPlaying":false,"intendsPlayback":false,"updatedAt":"2026-11-29T12:00:00.123Z","clockSynced":true,"revision":2,"ended":true,"commands":["play","toggle","next","previous","select","setVolume","volumeUp","volumeDown","mute","setSchedules","setNightCap","saveMix"],"devices":[{"id":"kitchen","name":"Ambient speaker (kitchen)","type":"speaker","volume":{"control":"absolute","level":0.45,"step":0.05,"maxLevel":1,"capSource":"config"},"muted":false,"audio":"ok","underruns":0,"software":"ambient-speaker test","epoch":"e1","nightCap":null}],"sleepTimer":null}"#,
        ], state: { $0.volume = .absolute(level: 0.45) })
        let counterClockwise = h.startDetent(clockwise: false)
        h.assertEffects(of: .lineEdge(counterClockwise), equal: [
            #"publish ~/event qos0 {"source":"knob","delta":-1}"#,
            #"audio setLevel(0.4)"#,
            #"publish ~/device qos1 retained {"id":"kitchen","name":"Ambient speaker (kitchen)","type":"speaker","volume":{"control":"absolute","level":0.4,"step":0.05,"maxLevel":1,"capSource":"config"},"muted":false,"audio":"ok","underruns":0,"software":"ambient-speaker test","epoch":"e1","nightCap":null}"#,
            #"publish ~/session qos1 retained {"id":null,"soundID":"white","soundName":"White noise","layers":null,"isPlaying":false,"intendsPlayback":false,"updatedAt":"2026-11-29T12:00:00.123Z","clockSynced":true,"revision":3,"ended":true,"commands":["play","toggle","next","previous","select","setVolume","volumeUp","volumeDown","mute","setSchedules","setNightCap","saveMix"],"devices":[{"id":"kitchen","name":"Ambient speaker (kitchen)","type":"speaker","volume":{"control":"absolute","level":0.4,"step":0.05,"maxLevel":1,"capSource":"config"},"muted":false,"audio":"ok","underruns":0,"software":"ambient-speaker test","epoch":"e1","nightCap":null}],"sleepTimer":null}"#,
        ], state: { $0.volume = .absolute(level: 0.4) })
    }

    @Test func aTickWithNothingDueDoesNothing() {
        var h = Self.ready()
        h.now = h.now.advanced(byMilliseconds: 10)
        h.assertEffects(of: .tick(h.now), equal: [])
    }

    @Test func theIdleTimeoutEndsAPausedSession() {
        var h = Self.playing()
        h.commandDone(#"{"id":"p","action":"pause"}"#)
        h.now = h.now.advanced(byMilliseconds: 1_800_000)
        h.assertEffects(of: .tick(h.now), equal: [
            #"log info session session-1 ended after 1800 s paused"#,
            #"publish ~/session qos1 retained {"id":"session-1","soundID":"white","soundName":"White noise","layers":null,"isPlaying":false,"intendsPlayback":false,"updatedAt":"2026-11-29T12:00:00.123Z","clockSynced":true,"revision":4,"ended":true,"commands":["play","toggle","next","previous","select","setVolume","volumeUp","volumeDown","mute","setSchedules","setNightCap","saveMix"],"devices":[{"id":"kitchen","name":"Ambient speaker (kitchen)","type":"speaker","volume":{"control":"absolute","level":0.4,"step":0.05,"maxLevel":1,"capSource":"config"},"muted":false,"audio":"ok","underruns":0,"software":"ambient-speaker test","epoch":"e1","nightCap":null}],"sleepTimer":null}"#,
            #"saveState PersistedState(soundID: "white", level: Optional(0.4), intendsPlayback: false, sleepTimer: nil, schedule: SpeakerCore.PersistedSchedule(rules: nil, nightCap: nil, firedThrough: nil))"#,
        ], state: { $0.session.isActive = false; $0.session.pausedSince = nil })
    }
}
