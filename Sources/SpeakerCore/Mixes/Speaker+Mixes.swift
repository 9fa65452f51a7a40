// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// The mix commands and what a mix means for the other domains: the
/// transport's catalog (sounds, then mixes), the engine's table of mixes
/// (`AudioRequest.mixes`), the playing levels (`AudioRequest.setLayerLevel`),
/// the state directory (`saveMixes`) and `device.problem`.
extension Speaker {
    /// A mix command: `saveMix`, `deleteMix` or `setLayerLevel`.
    enum MixCommand: Equatable {
        case save(MixDefinition)
        case delete(mixID: String)
        case setLevel(soundID: String, level: Double)
    }

    /// Applies a mix command from MQTT (`origin` set). A rejected command changes nothing.
    mutating func applyMix(_ command: MixCommand, origin: PendingCommand?, at now: MonotonicInstant)
        -> (outcome: ApplyOutcome, effects: [SpeakerEffect]) {
        switch command {
        case .save(let mix):
            let existing = state.mixes.mix(id: mix.id)
            if let (path, message) = state.mixes.problem(with: mix, replacing: existing?.id) {
                let code: CommandErrorCode = path.hasSuffix(".soundID") && message.contains("no sound") ? .unknownSound : .invalidValue
                return (.rejected(code, "\(path == "id" ? "mixID" : path): \(message)"), [])
            }
            let wasPlaying = state.transport.selectedSound.id == mix.id && state.transport.session.intendsPlayback
            let discoveryBefore = homeAssistantDiscovery
            state.mixes.store(mix, configMixes: config.mixes)
            var effects = mixesChanged(discoveryBefore, log: "mix \"\(mix.id)\" \(existing == nil ? "saved" : "replaced") (\(mix.layers.count) layers)")
            guard wasPlaying, let old = existing else { return (.done(level: nil), effects) }
            if old.layers.map(\.soundID) == mix.layers.map(\.soundID) {
                // Same sounds: the layers ramp to their new levels.
                effects += mix.layers.map { .audio(.setLayerLevel(soundID: $0.soundID, level: $0.level)) }
                return (.done(level: nil), effects)
            }
            // Other sounds: crossfade to the mix as saved now.
            let step = state.transport.reloadSelected(origin: origin, tickets: &state.tickets, context: transportContext)
            return (step.outcome, effects + step.effects)
        case .delete(let mixID):
            guard state.mixes.mix(id: mixID) != nil else {
                return (.rejected(.unknownSound, "mixID: no mix \"\(mixID)\" in the catalog"), [])
            }
            guard state.transport.selectedSound.id != mixID else {
                return (.rejected(.unsupported, "mixID: \"\(mixID)\" is selected; select another sound first"), [])
            }
            let discoveryBefore = homeAssistantDiscovery
            state.mixes.remove(id: mixID, configMixes: config.mixes)
            return (.done(level: nil), mixesChanged(discoveryBefore, log: "mix \"\(mixID)\" deleted"))
        case let .setLevel(soundID, level):
            let selected = state.transport.selectedSound.id
            guard var layers = state.mixes.playingLayers(id: selected) else {
                return (.rejected(.unsupported, "no mix is selected (\"\(selected)\" is a sound)"), [])
            }
            guard let index = layers.firstIndex(where: { $0.soundID == soundID }) else {
                return (.rejected(.unknownSound, "soundID: \"\(soundID)\" is not a layer of mix \"\(selected)\""), [])
            }
            let tidy = VolumeControlState.tidy(level)
            guard layers[index].level != tidy else { return (.done(level: nil), []) }
            layers[index].level = tidy
            state.mixes.live = MixesState.LiveLevels(mixID: selected, layers: layers)
            return (.done(level: nil), [.audio(.setLayerLevel(soundID: soundID, level: tidy))])
        }
    }

    /// After the mixes changed: the transport's catalog, the engine's table,
    /// the state directory, a log line, and Home Assistant's discovery again
    /// (its select lists the catalog) ahead of the `catalog` that shows the change.
    private mutating func mixesChanged(_ discoveryBefore: HomeAssistantDiscovery, log: String) -> [SpeakerEffect] {
        state.transport.replaceCatalog(state.mixes.catalog)
        var effects: [SpeakerEffect] = [.log(.info, log), .audio(.mixes(state.mixes.mixes))]
        let discovery = homeAssistantDiscovery
        if discovery != discoveryBefore && state.link.mqttConnected { effects += publishDiscovery() }
        if let saved = state.mixes.saved { effects.append(.saveMixes(saved)) }
        return effects
    }

    /// On `.start`: the engine learns the mixes before anything plays; what
    /// building the list found is logged.
    mutating func startMixes() -> [SpeakerEffect] {
        let notes = state.mixes.notes.map { SpeakerEffect.log(.warning, $0) }
        state.mixes.notes = []
        return state.mixes.mixes.isEmpty ? notes : notes + [.audio(.mixes(state.mixes.mixes))]
    }

    /// The engine built mix `mixID` without the `dropped` layers (none: all play).
    mutating func handleMixLayers(mixID: String, dropped: [DroppedLayer]) -> [SpeakerEffect] {
        if dropped.isEmpty {
            if state.mixes.problem?.mixID == mixID { state.mixes.problem = nil }
            return []
        }
        let problem = MixesState.LayerProblem(mixID: mixID, dropped: dropped)
        state.mixes.problem = problem
        return [.log(.warning, problem.text + "; the other layers play")]
    }

    /// A selection that moved to another entry leaves the old mix's playing
    /// levels (they return to its preset when it is selected again).
    mutating func selectionMoved(from previousID: String) {
        let selected = state.transport.selectedSound.id
        guard selected != previousID else { return }
        if state.mixes.live?.mixID != selected { state.mixes.live = nil }
        if state.mixes.problem?.mixID != selected { state.mixes.problem = nil }
    }

    /// Every engine request that makes a fresh source for the selected mix
    /// is followed by its playing levels where they differ from the preset
    /// (a resume after a pause builds the mix again), so the engine plays
    /// what `session.layers` says.
    func followPlayingLevels(_ effects: [SpeakerEffect]) -> [SpeakerEffect] {
        guard let live = state.mixes.live, let preset = state.mixes.mix(id: live.mixID) else { return effects }
        var out: [SpeakerEffect] = []
        out.reserveCapacity(effects.count + live.layers.count)
        for effect in effects {
            out.append(effect)
            switch effect {
            case .audio(.play(let id, _, _)) where id == live.mixID, .audio(.switchTo(let id, _, _)) where id == live.mixID:
                for (layer, saved) in zip(live.layers, preset.layers) where layer.level != saved.level {
                    out.append(.audio(.setLayerLevel(soundID: layer.soundID, level: layer.level)))
                }
            default: break
            }
        }
        return out
    }

    /// The actions of the mixes domain accepted right now.
    var availableMixCommands: [String] {
        var list = ["saveMix"]
        if !state.mixes.mixes.isEmpty { list.append("deleteMix") }
        if state.mixes.mix(id: state.transport.selectedSound.id) != nil { list.append("setLayerLevel") }
        return list
    }
}
