// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import Testing
import SpeakerCore
import SpeakerProtocol
import SpeakerSystem
import SpeakerPorts
import SpeakerRuntime
import Ambience

/// The audio service builds a mix from its layers: a layer whose file
/// cannot be opened any more is left out, `device.problem` names it and the
/// other layers play; `setLayerLevel` reaches the source the engine plays;
/// `saveMix` is written to `mixes.json` at once.
@Suite(.serialized) struct MixRuntimeTests {
    func command(_ h: RuntimeHarness, _ json: String) {
        h.deliver([.message(MQTTMessage(topic: "\(h.config.topicRoot)/command", payload: Array(json.utf8), qos: 1))])
    }

    @Test func aLayerWhoseFileFailsIsDroppedNamedInDeviceProblemAndTheRestPlays() throws {
        let h = try RuntimeHarness(soundFiles: ["ocean"]) {
            $0.mixes = [MixDefinition(id: "night", name: "Night",
                                      layers: [MixLayer(soundID: "brown", level: 0.8), MixLayer(soundID: "ocean", level: 0.5)])]
        }
        try h.runtime.start()
        h.deliver([.connected(sessionPresent: false)])
        h.loop.runDueTimers()
        unlink("\(h.config.audio.soundsDirectory)/ocean.wav")  // gone after the catalog scan
        command(h, #"{"id":"c1","action":"select","soundID":"night"}"#)
        let mix = try #require(h.audio.lastSource as? MixSource, "a mix plays as one MixSource")
        #expect(mix.layerIDs == ["brown"], "the rest plays")
        let ticket = try #require(h.lastTicket)
        h.report([.playing(ticket: ticket)])
        let device = try #require(h.published("device").last)
        #expect(device.contains(#""problem":"mix \"night\": layer \"ocean\" dropped (cannot be played: "#), "\(device)")
        command(h, #"{"id":"c2","action":"setLayerLevel","soundID":"brown","level":0.25}"#)
        #expect(mix.targetGain(layer: 0) == VolumeCurve.gain(level: 0.25), "the playing source heads for the new level")
        _ = h.runtime.stop()
    }

    @Test func playAfterAPauseResumesTheMixTheEngineHoldsUnlessItWasSavedAgain() throws {
        let h = try RuntimeHarness {
            $0.mixes = [MixDefinition(id: "night", name: "Night",
                                      layers: [MixLayer(soundID: "brown", level: 0.8), MixLayer(soundID: "pink", level: 0.5)])]
        }
        try h.runtime.start()
        h.deliver([.connected(sessionPresent: false)])
        h.loop.runDueTimers()
        func confirm() throws {
            let ticket = try #require(h.lastTicket)
            h.report([h.audio.requests.last?.hasPrefix("pause") == true ? .paused(ticket: ticket) : .playing(ticket: ticket)])
        }
        command(h, #"{"id":"c1","action":"select","soundID":"night"}"#)
        let first = try #require(h.audio.lastSource as? MixSource)
        try confirm()
        command(h, #"{"id":"c2","action":"pause"}"#)
        try confirm()
        command(h, #"{"id":"c3","action":"play"}"#)
        #expect(h.audio.requests.last?.hasPrefix("play nil") == true, "\(h.audio.requests)")
        try confirm()
        command(h, #"{"id":"c4","action":"pause"}"#)
        try confirm()
        command(h, #"{"id":"c5","action":"saveMix","mixID":"night","name":"Night","layers":[{"soundID":"brown","level":0.1},{"soundID":"pink","level":0.5}]}"#)
        command(h, #"{"id":"c6","action":"play"}"#)
        #expect(h.audio.requests.last?.hasPrefix("play source") == true, "a saved mix is built again: \(h.audio.requests)")
        #expect((h.audio.lastSource as? MixSource) !== first)
        _ = h.runtime.stop()
    }

    @Test func saveMixIsWrittenToTheStateDirectoryAtOnce() throws {
        let h = try RuntimeHarness()
        try h.runtime.start()
        h.deliver([.connected(sessionPresent: false)])
        command(h, #"{"id":"c1","action":"saveMix","mixID":"hum","name":"Hum","layers":[{"soundID":"brown","level":0.4}]}"#)
        let bytes = try FileIO.read(path: h.directory + "/mixes.json")
        let saved = try SavedMixes.decode(bytes)
        #expect(saved.mixes == [MixDefinition(id: "hum", name: "Hum", layers: [MixLayer(soundID: "brown", level: 0.4)])])
        _ = h.runtime.stop()
    }
}
