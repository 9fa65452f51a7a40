// SPDX-License-Identifier: Apache-2.0
import Testing
import SpeakerCore
import SpeakerProtocol

/// The night cap, the startup level and the schedule commands over MQTT.
@Suite struct NightCapTests {
    static let berlin2159 = utcSeconds(2026, 12, 2, 20, 59)  // 21:59 in Berlin

    func nightHarness(level: Double = 0.8, configure: (inout SpeakerConfig) -> Void = { _ in }) -> ScheduleHarness {
        ScheduleHarness(clock: TestWallClock(seconds: Self.berlin2159),
                        restored: PersistedState(soundID: "white", level: level, intendsPlayback: false)) {
            $0.volume.night = NightCap(from: 22 * 60, to: 7 * 60, maxLevel: 0.3)
            configure(&$0)
        }
    }

    @Test func whenTheWindowOpensTheLevelRampsDownSlowlyToTheCap() {
        var s = nightHarness()
        let boot = s.start()
        #expect(boot.lastPublished("device")?["nightCap"] == .object([("from", .string("22:00")), ("to", .string("07:00")),
                                                                   ("maxLevel", .number(0.3)), ("active", .bool(false))]))
        #expect(boot.lastPublished("device")?["volume"]?["maxLevel"] == .number(1))
        #expect(boot.lastPublished("device")?["volume"]?["capSource"] == .string("config"))
        let ramp = s.pass(seconds: 60 + 40)
        let levels = ramp.levels
        #expect(levels.first == 0.78)
        #expect(levels.last == 0.3)
        #expect(levels.count == 25, "0.8 → 0.3 by 0.02 a second")
        #expect(zip(levels, levels.dropFirst()).allSatisfy { abs($0 - $1 - 0.02) < 1e-9 })
        let device = ramp.lastPublished("device")
        #expect(device?["volume"]?["maxLevel"] == .number(0.3))
        #expect(device?["volume"]?["capSource"] == .string("night"))
        #expect(device?["nightCap"]?["active"] == .bool(true))
        #expect(s.state.schedule.rampAt == nil)
    }

    @Test func setVolumeClampsToTheCapInsideTheWindowAndTheResultSaysTheLevelApplied() {
        var s = nightHarness(level: 0.2)
        s.start()
        s.pass(seconds: 120)
        let fx = s.h.command(#"{"id":"v","action":"setVolume","level":0.9}"#)
        #expect(fx.lastPublished("command/result")?["level"] == .number(0.3))
        #expect(s.state.volume.level == .absolute(level: 0.3))
        // Morning: the cap lifts.
        s.pass(seconds: 9 * 3600)
        #expect(s.h.command(#"{"id":"w","action":"setVolume","level":0.9}"#).lastPublished("command/result")?["level"] == .number(0.9))
    }

    @Test func startingInsideTheWindowStartsAtTheCapAtOnce() {
        var s = nightHarness()
        s.clock.set(seconds: Self.berlin2159 + 3600)
        let boot = s.start()
        #expect(boot.levels.allSatisfy { $0 <= 0.3 })
        #expect(s.state.volume.level == .absolute(level: 0.3))
    }

    @Test func theCapInForceAndItsSourceFollowTheWindowInDevice() {
        var s = nightHarness { $0.volume.maxLevel = 0.8 }
        let boot = s.start()
        #expect(boot.lastPublished("device")?["volume"]?["maxLevel"] == .number(0.8))
        #expect(boot.lastPublished("device")?["volume"]?["capSource"] == .string("config"))
        let night = s.pass(seconds: 120)
        #expect(night.lastPublished("device")?["volume"]?["maxLevel"] == .number(0.3))
        #expect(night.lastPublished("device")?["volume"]?["capSource"] == .string("night"))
        // 07:00 the next morning: the window closes, the configured cap is back.
        let morning = s.step(to: Self.berlin2159 + 9 * 3600 + 60)
        #expect(morning.lastPublished("device")?["volume"]?["maxLevel"] == .number(0.8))
        #expect(morning.lastPublished("device")?["volume"]?["capSource"] == .string("config"))
        #expect(s.state.schedule.nightActive == false)
    }

    @Test func aNightCapNoLowerThanTheConfiguredOneLeavesTheConfigAsTheSource() {
        var s = nightHarness(level: 0.2) { $0.volume.maxLevel = 0.3 }
        s.start()
        let night = s.pass(seconds: 120)
        #expect(s.state.schedule.nightActive)
        let device = s.h.send(.tick(s.h.now)).lastPublished("device") ?? night.lastPublished("device")
        #expect(device?["volume"]?["maxLevel"] == .number(0.3))
        #expect(device?["volume"]?["capSource"] == .string("config"))
    }

    @Test func aFixedStartupLevelReplacesTheSavedOne() {
        var s = ScheduleHarness(clock: TestWallClock(seconds: Self.berlin2159),
                                restored: PersistedState(soundID: "white", level: 0.9, intendsPlayback: false)) {
            $0.volume.startupLevel = .fixed(0.25)
        }
        s.start()
        #expect(s.state.volume.level == .absolute(level: 0.25))
    }

    @Test func setNightCapReplacesAndNullRemoves() {
        var s = nightHarness()
        s.start()
        let set = s.h.command(#"{"id":"n","action":"setNightCap","nightCap":{"from":"21:00","to":"06:00","maxLevel":0.5}}"#)
        #expect(set.lastPublished("command/result")?["ok"] == .bool(true))
        #expect(set.lastPublished("device")?["nightCap"]?["active"] == .bool(true))
        #expect(s.state.schedule.nightCapOverride?.value == NightCap(from: 21 * 60, to: 6 * 60, maxLevel: 0.5))
        let off = s.h.command(#"{"id":"o","action":"setNightCap","nightCap":null}"#)
        #expect(off.lastPublished("device")?["nightCap"] == .null)
        let bad = s.h.command(#"{"id":"b","action":"setNightCap","nightCap":{"from":"21:00","to":"21:00","maxLevel":0.5}}"#)
        #expect(bad.lastPublished("command/result")?["error"]?["code"] == .string("invalid-value"))
        #expect(bad.lastPublished("command/result")?["error"]?["message"] == .string("nightCap.to: must differ from from (21:00)"))
    }

    @Test func aStepOnlyDeviceRefusesANightCap() {
        var s = ScheduleHarness(clock: TestWallClock(seconds: Self.berlin2159)) { $0.volume.mode = .gpioStep }
        s.start()
        let fx = s.h.command(#"{"id":"n","action":"setNightCap","nightCap":{"from":"21:00","to":"06:00","maxLevel":0.5}}"#)
        #expect(fx.lastPublished("command/result")?["error"]?["code"] == .string("unsupported"))
        #expect(s.h.commandDone(#"{"id":"x","action":"play"}"#).lastPublished("session")?["commands"]?.arrayContains("setNightCap") == false)
    }

    @Test func setSchedulesIsValidatedLikeTheConfigAndPublishedNormalised() {
        var s = ScheduleHarness(clock: TestWallClock(seconds: Self.berlin2159))
        s.start()
        func error(_ json: String) -> (JSONValue?, JSONValue?) {
            let result = s.h.command(json).lastPublished("command/result")
            return (result?["error"]?["code"], result?["error"]?["message"])
        }
        #expect(error(#"{"id":"a","action":"setSchedules","schedules":[{"at":"25:00","action":"play"}]}"#)
                == (.string("invalid-value"), .string(#"schedules[0].at: expected "HH:MM" (00:00 to 23:59), got "25:00""#)))
        #expect(error(#"{"id":"b","action":"setSchedules","schedules":[{"at":7,"action":"play"}]}"#).0 == .string("malformed"))
        #expect(error(#"{"id":"c","action":"setSchedules","schedules":[{"at":"07:00","action":"play","soundID":"rain"}]}"#)
                == (.string("unknown-sound"), .string(#"schedules[0].soundID: no sound "rain" in the catalog"#)))
        #expect(error(#"{"id":"d","action":"setSchedules","schedules":[{"at":"07:00","action":"stop","level":0.5}]}"#).1
                == .string("schedules[0].level: only a play rule sets a level"))
        #expect(error(#"{"id":"e","action":"setSchedules","schedules":[{"at":"07:00","action":"play","days":["mon","xyz"]}]}"#).0
                == .string("invalid-value"))
        #expect(error(#"{"id":"f","action":"setSchedules"}"#).0 == .string("malformed"))
        let ok = s.h.command(#"{"id":"g","action":"setSchedules","schedules":[{"at":"07:00","days":["sun","mon"],"action":"play","soundID":"pink"}]}"#)
        #expect(ok.lastPublished("command/result")?["ok"] == .bool(true))
        let published = ok.lastPublished("schedules")
        #expect(published?["rules"] == .array([.object([
            ("at", .string("07:00")), ("days", .array([.string("mon"), .string("sun")])), ("action", .string("play")),
            ("soundID", .string("pink")), ("level", .null), ("fadeSeconds", .number(30)), ("enabled", .bool(true)),
        ])]))
        #expect(published?["next"]?["rule"] == .number(0))
        let off = s.h.command(#"{"id":"h","action":"setScheduleEnabled","index":0,"enabled":false}"#)
        #expect(off.lastPublished("schedules")?["rules"]?.firstRule?["enabled"] == .bool(false))
        #expect(off.lastPublished("schedules")?["next"] == .null)
        #expect(error(#"{"id":"i","action":"setScheduleEnabled","index":3,"enabled":true}"#)
                == (.string("invalid-value"), .string("index: no rule 3 (there are 1)")))
    }

    @Test func theMQTTValueHoldsUntilTheConfigFilesValueChanges() {
        let fileRules = #"[{"at":"06:00","action":"play"}]"#
        var s = ScheduleHarness(clock: TestWallClock(seconds: Self.berlin2159), rules: fileRules)
        s.start()
        s.h.command(#"{"id":"g","action":"setSchedules","schedules":[{"at":"07:00","action":"stop"}]}"#)
        let saved = PersistedState.decodeOrNil(s.h.speaker.persistedSnapshot.fileBytes)
        #expect(saved?.schedule.rules?.value.first?.minuteOfDay == 7 * 60)
        // Restart with the same file: the MQTT rules hold.
        var same = ScheduleHarness(clock: TestWallClock(seconds: Self.berlin2159), rules: fileRules, restored: saved)
        same.start()
        #expect(same.state.schedule.rules.map(\.minuteOfDay) == [7 * 60])
        // The file changed since: its rules apply and the MQTT ones are dropped.
        var changed = ScheduleHarness(clock: TestWallClock(seconds: Self.berlin2159), rules: #"[{"at":"05:00","action":"play"}]"#, restored: saved)
        changed.start()
        #expect(changed.state.schedule.rules.map(\.minuteOfDay) == [5 * 60])
        #expect(changed.state.schedule.rulesOverride == nil)
    }

    @Test func theConfigRefusesWhatAStepOnlyDeviceCannotDo() {
        let decoder = ConfigDecoder(hostname: "kitchen")
        func problem(_ json: String) -> String? {
            do { _ = try decoder.decode(Array(json.utf8)); return nil } catch { return error.description }
        }
        #expect(problem(#"{"volume":{"mode":"gpio-step","night":{"from":"22:00","to":"07:00","maxLevel":0.3}}}"#)
                == "volume.night: volume.mode gpio-step has no level to cap; set volume.night to null")
        #expect(problem(#"{"volume":{"mode":"gpio-step","startupLevel":0.3}}"#)
                == #"volume.startupLevel: volume.mode gpio-step has no level to start at; use "restore""#)
        #expect(problem(#"{"volume":{"startupLevel":"loud"}}"#)?.hasPrefix("volume.startupLevel: expected \"restore\" or a number") == true)
        #expect(problem(#"{"volume":{"maxLevel":0.5,"startupLevel":0.8}}"#)?.hasPrefix("volume.startupLevel: must be") == true)
        #expect(problem(#"{"schedules":[{"at":"07:00","action":"play"},{"at":"7:00","action":"play"}]}"#)
                == #"schedules[1].at: expected "HH:MM" (00:00 to 23:59), got "7:00""#)
        #expect(problem(#"{"schedules":[{"at":"07:00","action":"dance"}]}"#)?.hasPrefix("schedules[0].action: expected one of") == true)
        #expect(problem(#"{"clock":{"timeZone":"../etc/passwd"}}"#)?.hasPrefix("clock.timeZone: expected an IANA zone name") == true)
        #expect(problem(#"{"clock":{"requireSync":false,"timeZone":"Europe/Berlin"},"volume":{"startupLevel":0.3,"night":null}}"#) == nil)
    }
}

extension JSONValue {
    func arrayContains(_ text: String) -> Bool {
        if case .array(let items) = self { return items.contains(.string(text)) }
        return false
    }
    var firstRule: JSONValue? {
        if case .array(let items) = self { return items.first }
        return nil
    }
}
