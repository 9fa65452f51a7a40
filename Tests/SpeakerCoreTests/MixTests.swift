// SPDX-License-Identifier: Apache-2.0
import Testing
import SpeakerCore
import SpeakerProtocol

@Suite struct MixTests {
    static let night = MixDefinition(id: "night", name: "Night", summary: "Rain over brown",
                                     layers: [MixLayer(soundID: "pink", level: 0.6), MixLayer(soundID: "brown", level: 0.3)])
    static let saveNight = #"{"id":"s1","action":"saveMix","mixID":"night","name":"Night","layers":[{"soundID":"pink","level":0.6},{"soundID":"brown","level":0.3}]}"#

    func result(_ fx: [SpeakerEffect]) -> JSONValue? { fx.lastPublished("command/result") }

    func started(config: (inout SpeakerConfig) -> Void = { _ in }, saved: SavedMixes? = nil) -> Harness {
        var h = Harness(savedMixes: saved, configure: config)
        h.send(.start(at: h.now))
        return h
    }

    @Test func configMixesAreCatalogEntriesAfterTheSoundsWithKindAndLayers() {
        var h = Harness { $0.mixes = [Self.night] }
        let fx = h.send(.start(at: h.now))
        #expect(fx.audioRequests.first == .mixes([Self.night]), "the engine learns the mixes before anything plays")
        let catalog = fx.lastPublished("catalog")
        #expect(catalog?.jsonText.contains(#"{"id":"white","name":"White noise","summary":"flat","kind":"sound"}"#) == true)
        #expect(catalog?.jsonText.hasSuffix(#"{"id":"night","name":"Night","summary":"Rain over brown","kind":"mix","layers":[{"soundID":"pink","level":0.6},{"soundID":"brown","level":0.3}]}]"#) == true)
        #expect(fx.lastPublished("session")?["layers"] == .null, "a single sound has no layers")
    }

    @Test func saveMixOverMQTTAddsTheMixPersistsItAndAnswersOnce() {
        var h = started()
        let fx = h.command(Self.saveNight)
        #expect(result(fx)?["ok"] == .bool(true))
        #expect(fx.lastPublished("catalog")?.jsonText.contains(#""id":"night""#) == true)
        let saved = fx.compactMap { if case .saveMixes(let s) = $0 { return s } else { return nil } }
        #expect(saved == [SavedMixes(mixes: [Self.night.with(summary: nil)], configBasis: [])])
        #expect(fx.audioRequests.contains(.mixes([Self.night.with(summary: nil)])))
        let commands = fx.lastPublished("session")?["commands"]
        #expect(commands?.jsonText.contains("deleteMix") == true)
        #expect(commands?.jsonText.contains("setLayerLevel") == false, "no mix selected yet")
    }

    @Test(arguments: [
        (#"{"id":"b1","action":"saveMix","mixID":"m","name":"M","layers":[{"soundID":"rain","level":0.5}]}"#, "unknown-sound", "layers[0].soundID"),
        (#"{"id":"b2","action":"saveMix","mixID":"m","name":"M","layers":[{"soundID":"pink","level":1.5}]}"#, "invalid-value", "layers[0].level"),
        (#"{"id":"b3","action":"saveMix","mixID":"m","name":"M","layers":[]}"#, "invalid-value", "layers"),
        (#"{"id":"b4","action":"saveMix","mixID":"m","name":"M","layers":[{"soundID":"pink","level":0.1},{"soundID":"white","level":0.1},{"soundID":"brown","level":0.1},{"soundID":"pink","level":0.2},{"soundID":"white","level":0.2}]}"#, "invalid-value", "layers"),
        (#"{"id":"b5","action":"saveMix","mixID":"m","name":"M","layers":[{"soundID":"pink","level":0.1},{"soundID":"pink","level":0.2}]}"#, "invalid-value", "layers[1].soundID"),
        (#"{"id":"b6","action":"saveMix","mixID":"pink","name":"M","layers":[{"soundID":"white","level":0.1}]}"#, "invalid-value", "mixID"),
        (#"{"id":"b7","action":"saveMix","mixID":"Bad ID","name":"M","layers":[{"soundID":"white","level":0.1}]}"#, "invalid-value", "mixID"),
        (#"{"id":"b8","action":"saveMix","mixID":"m","layers":[{"soundID":"white","level":0.1}]}"#, "malformed", "name"),
        (#"{"id":"b9","action":"saveMix","mixID":"m","name":"M","layers":{"soundID":"white"}}"#, "malformed", "layers"),
        (#"{"id":"c1","action":"deleteMix","mixID":"nope"}"#, "unknown-sound", "mixID"),
        (#"{"id":"c2","action":"setLayerLevel","soundID":"pink","level":0.5}"#, "unsupported", "no mix"),
        (#"{"id":"c3","action":"setLayerLevel","soundID":"pink","level":-0.1}"#, "invalid-value", "level"),
        (#"{"id":"c4","action":"setLayerLevel","soundID":"pink"}"#, "malformed", "level"),
    ])
    func badMixCommandsAreRefusedNamingTheKeyAndChangeNothing(payload: String, code: String, key: String) {
        var h = started()
        let before = h.state
        let fx = h.command(payload)
        #expect(result(fx)?["error"]?["code"] == .string(code))
        #expect(result(fx)?["error"]?["message"]?.stringValue?.contains(key) == true, "\(result(fx)?.jsonText ?? "")")
        #expect(fx.audioRequests.isEmpty)
        #expect(h.state.mixes == before.mixes && h.state.transport.catalog == before.transport.catalog)
    }

    @Test func aSelectedMixPlaysByIDAndShowsItsLayersAndSetLayerLevel() {
        var h = started { $0.mixes = [Self.night] }
        let fx = h.commandDone(#"{"id":"p1","action":"select","soundID":"night"}"#)
        #expect(fx.audioRequests.contains { if case .play("night", _, _) = $0 { return true } else { return false } })
        let session = fx.lastPublished("session")
        #expect(session?["soundID"] == .string("night") && session?["soundName"] == .string("Night"))
        #expect(session?["layers"]?.jsonText == #"[{"soundID":"pink","level":0.6},{"soundID":"brown","level":0.3}]"#)
        #expect(session?["commands"]?.jsonText.contains("setLayerLevel") == true)
        // next/previous reach mixes like sounds: the mix is last, next wraps to the first sound.
        let next = h.commandDone(#"{"id":"p2","action":"next"}"#)
        #expect(next.lastPublished("session")?["soundID"] == .string("white"))
        let previous = h.commandDone(#"{"id":"p3","action":"previous"}"#)
        #expect(previous.lastPublished("session")?["soundID"] == .string("night"))
    }

    @Test func setLayerLevelRampsThatLayerKeepsThePresetAndSurvivesAPause() {
        var h = started { $0.mixes = [Self.night] }
        h.commandDone(#"{"id":"p1","action":"select","soundID":"night"}"#)
        let fx = h.command(#"{"id":"l1","action":"setLayerLevel","soundID":"brown","level":0.8}"#)
        #expect(result(fx)?["ok"] == .bool(true))
        #expect(fx.audioRequests == [.setLayerLevel(soundID: "brown", level: 0.8)])
        #expect(fx.lastPublished("session")?["layers"]?.jsonText == #"[{"soundID":"pink","level":0.6},{"soundID":"brown","level":0.8}]"#)
        #expect(fx.published("catalog").isEmpty, "the preset is not changed")
        #expect(!fx.contains { if case .saveMixes = $0 { return true } else { return false } })
        h.commandDone(#"{"id":"l2","action":"pause"}"#)
        let resumed = h.command(#"{"id":"l3","action":"play"}"#)
        let requests = resumed.audioRequests
        guard let play = requests.firstIndex(where: { if case .play("night", _, _) = $0 { return true } else { return false } }) else {
            Issue.record("no play: \(requests)"); return
        }
        #expect(requests[play + 1] == .setLayerLevel(soundID: "brown", level: 0.8), "the fresh source plays the session's levels")
        let layer = h.command(#"{"id":"l4","action":"setLayerLevel","soundID":"rain","level":0.5}"#)
        #expect(result(layer)?["error"]?["code"] == .string("unknown-sound"))
    }

    @Test func selectingAnotherEntryReturnsTheMixToItsPreset() {
        var h = started { $0.mixes = [Self.night] }
        h.commandDone(#"{"id":"p1","action":"select","soundID":"night"}"#)
        h.command(#"{"id":"l1","action":"setLayerLevel","soundID":"brown","level":0.8}"#)
        h.commandDone(#"{"id":"p2","action":"select","soundID":"pink"}"#)
        let back = h.commandDone(#"{"id":"p3","action":"select","soundID":"night"}"#)
        #expect(back.lastPublished("session")?["layers"]?.jsonText.contains(#""level":0.3"#) == true)
        #expect(!back.audioRequests.contains(.setLayerLevel(soundID: "brown", level: 0.8)))
    }

    @Test func savingThePlayingMixWithTheSameSoundsRampsItsLayersOtherSoundsCrossfade() {
        var h = started()
        h.command(Self.saveNight)
        h.commandDone(#"{"id":"p1","action":"select","soundID":"night"}"#)
        let same = h.command(#"{"id":"s2","action":"saveMix","mixID":"night","name":"Night","layers":[{"soundID":"pink","level":0.2},{"soundID":"brown","level":0.9}]}"#)
        #expect(same.audioRequests.contains(.setLayerLevel(soundID: "brown", level: 0.9)))
        #expect(!same.audioRequests.contains { if case .switchTo = $0 { return true } else { return false } })
        let other = h.command(#"{"id":"s3","action":"saveMix","mixID":"night","name":"Night","layers":[{"soundID":"white","level":0.2}]}"#)
        #expect(other.audioRequests.contains { if case .switchTo("night", _, _) = $0 { return true } else { return false } })
    }

    @Test func homeAssistantsSelectListsTheMixesAndIsSentAgainWhenTheyChange() {
        var h = started()
        h.send(.mqttConnected(at: h.now))
        let fx = h.command(Self.saveNight)
        let discovery = fx.publications.filter { $0.topic == "homeassistant/device/kitchen/config" }
        #expect(discovery.count == 1, "discovery re-sent for the select's options")
        #expect(discovery.first?.text.contains("Night") == true)
        let order = fx.publications.map(\.topic)
        #expect((order.firstIndex(of: "homeassistant/device/kitchen/config") ?? .max) < (order.firstIndex(of: "ambient-speaker/kitchen/catalog") ?? -1))
    }

    @Test func deleteMixRemovesItButNotWhileSelected() {
        var h = started { $0.mixes = [Self.night] }
        h.commandDone(#"{"id":"p1","action":"select","soundID":"night"}"#)
        let refused = h.command(#"{"id":"d1","action":"deleteMix","mixID":"night"}"#)
        #expect(result(refused)?["error"]?["code"] == .string("unsupported"))
        h.commandDone(#"{"id":"p2","action":"select","soundID":"pink"}"#)
        let fx = h.command(#"{"id":"d2","action":"deleteMix","mixID":"night"}"#)
        #expect(result(fx)?["ok"] == .bool(true))
        #expect(fx.lastPublished("catalog")?.jsonText.contains("night") == false)
        let saved = fx.compactMap { if case .saveMixes(let s) = $0 { return s } else { return nil } }
        #expect(saved == [SavedMixes(mixes: [], configBasis: [Self.night])], "deleting a config mix is kept over the config")
        #expect(h.state.transport.selectedSound.id == "pink")
    }

    @Test func savedMixesApplyWhileTheConfigIsUnchangedLastWriterWins() {
        let saved = SavedMixes(mixes: [Self.night], configBasis: [])
        let kept = started(saved: saved)
        #expect(kept.state.transport.catalog.last?.id == "night")
        let other = MixDefinition(id: "hum", name: "Hum", layers: [MixLayer(soundID: "brown", level: 1)])
        let replaced = started(config: { $0.mixes = [other] }, saved: saved)
        #expect(replaced.state.transport.catalog.map(\.id) == ["white", "pink", "brown", "hum"],
                "the config changed since: the file's new value applies")
    }

    @Test func aMixNamingAMissingSoundIsLeftOutAndLogged() {
        let gone = MixDefinition(id: "sea", name: "Sea", layers: [MixLayer(soundID: "ocean", level: 1)])
        var h = Harness { $0.mixes = [gone, Self.night] }
        let fx = h.send(.start(at: h.now))
        #expect(h.state.transport.catalog.map(\.id) == ["white", "pink", "brown", "night"])
        #expect(fx.contains(.log(.warning, #"mixes[0].layers[0].soundID: "ocean" is no sound in the catalog; mix "sea" left out"#)))
    }

    @Test func aDroppedLayerIsTheDeviceProblemUntilTheMixPlaysWhole() {
        var h = started { $0.mixes = [Self.night] }
        h.commandDone(#"{"id":"p1","action":"select","soundID":"night"}"#)
        let fx = h.send(.engine(.mixLayers(mixID: "night", dropped: [DroppedLayer(soundID: "brown", reason: "cannot be played: gone")]), at: h.now))
        #expect(fx.lastPublished("device")?["problem"] == .string(#"mix "night": layer "brown" dropped (cannot be played: gone)"#))
        let other = h.commandDone(#"{"id":"p2","action":"select","soundID":"pink"}"#)
        #expect(other.lastPublished("device")?["problem"] == nil)
    }

    @Test func theKnobStaysTheMasterLevelWithAMixPlaying() {
        var h = started { $0.mixes = [Self.night] }
        h.commandDone(#"{"id":"p1","action":"select","soundID":"night"}"#)
        let fx = h.commandDone(#"{"id":"v1","action":"volumeUp"}"#)
        #expect(fx.audioRequests.contains { if case .setLevel = $0 { return true } else { return false } })
        #expect(!fx.audioRequests.contains { if case .setLayerLevel = $0 { return true } else { return false } })
    }

    @Test func aStepOnlyAmpWithAMixInventsNoLevel() {
        var h = started { $0.mixes = [Self.night]; $0.volume.mode = .gpioStep }
        let fx = h.commandDone(#"{"id":"p1","action":"select","soundID":"night"}"#)
        guard case .array(let devices)? = fx.lastPublished("session")?["devices"] else { Issue.record("no session"); return }
        #expect(devices.first?["volume"]?.jsonText == #"{"control":"relative"}"#)
        #expect(fx.lastPublished("session")?["commands"]?.jsonText.contains("setVolume") == false)
        let knob = h.commandDone(#"{"id":"v1","action":"volumeUp"}"#)
        #expect(knob.contains { if case .amp = $0 { return true } else { return false } })
        #expect(!knob.audioRequests.contains { if case .setLayerLevel = $0 { return true } else { return false } })
    }

    @Test func savedMixesFileRoundTripsAndRefusesJunk() throws {
        let saved = SavedMixes(mixes: [Self.night], configBasis: [])
        #expect(try SavedMixes.decode(saved.fileBytes) == saved)
        #expect(throws: SavedMixes.DecodeError.self) {
            try SavedMixes.decode(Array(#"{"version":1,"configBasis":[],"mixes":[{"id":"x","name":"X","layers":[{"soundID":"a","level":3}]}]}"#.utf8))
        }
        #expect(throws: SavedMixes.DecodeError.self) { try SavedMixes.decode(Array(#"{"version":1,"mixes":[]}"#.utf8)) }
    }

    @Test(arguments: [
        (#"{"mixes":{}}"#, "mixes: expected an array"),
        (#"{"mixes":[{"id":"a","name":"A","layers":[{"soundID":"pink","level":0.5}]},{"id":"a","name":"B","layers":[{"soundID":"pink","level":0.5}]}]}"#, "mixes[1].id"),
        (#"{"mixes":[{"id":"a","name":"A","layers":[{"soundID":"pink","level":0.5,"gain":2}]}]}"#, "mixes[0].layers[0].gain"),
        (#"{"mixes":[{"id":"a","name":"A","layers":[{"soundID":"pink","level":2}]}]}"#, "mixes[0].layers[0].level"),
        (#"{"mixes":[{"id":"a","name":"A","colour":"red","layers":[]}]}"#, "mixes[0].colour"),
    ])
    func configMixesAreValidatedWithTheKeyPath(json: String, path: String) {
        #expect(throws: ConfigError.self) { try ConfigDecoder(hostname: "h").decode(Array(json.utf8)) }
        do { _ = try ConfigDecoder(hostname: "h").decode(Array(json.utf8)) } catch {
            #expect(error.description.hasPrefix(path), "\(error)")
        }
    }
}

extension MixDefinition {
    func with(summary: String?) -> MixDefinition {
        var copy = self
        copy.summary = summary
        return copy
    }
}
