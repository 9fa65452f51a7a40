// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// The mixes domain: which mixes exist (config `mixes`, or the last change
/// made over MQTT), the levels of the mix being played, and a layer that
/// could not be played. Its reducer is in `MixesState+Reduce`; `Speaker`
/// puts the mixes into the transport's catalog after the sounds.
///
/// `setLayerLevel` changes the selected mix's *playing* levels only
/// (`session.layers`), not the preset in the catalog: a slider dragged on a
/// phone or in Home Assistant is trying something out, and rewriting the
/// preset (retained `catalog`, the state file, and the config's own mix
/// turning into an MQTT one) on every step would lose the preset the
/// listener chose. `saveMix` keeps levels for good; the playing levels
/// last while the mix stays selected (pauses included) and return to the
/// preset when it is selected again or the speaker restarts.
public struct MixesState: Equatable, Sendable {
    /// The catalog's sounds (never mixes), in playback order.
    public private(set) var sounds: [CatalogEntry]
    /// The mixes in force, in catalog order (after the sounds).
    public private(set) var mixes: [MixDefinition]
    /// The config `mixes` value the MQTT changes were made over; nil while
    /// the mixes are the config's own (nothing to keep in the state directory).
    public private(set) var configBasis: [MixDefinition]?
    /// The selected mix's levels since a `setLayerLevel` (nil: the preset's).
    public internal(set) var live: LiveLevels?
    /// A layer of the selected mix the engine could not play, for `device.problem`.
    public internal(set) var problem: LayerProblem?
    /// What building the list found (a mix naming a sound that is gone), logged on `.start`.
    var notes: [String] = []

    /// One mix's playing levels.
    public struct LiveLevels: Equatable, Sendable {
        public var mixID: String
        public var layers: [MixLayer]
    }

    /// The layers of mix `mixID` dropped by the engine, and why.
    public struct LayerProblem: Equatable, Sendable {
        public var mixID: String
        public var dropped: [DroppedLayer]

        /// The `device.problem` text: `mix "night": layer "ocean" dropped (cannot be played: …)`.
        public var text: String {
            "mix \"\(mixID)\": " + dropped.map { "layer \"\($0.soundID)\" dropped (\($0.reason))" }.joined(separator: "; ")
        }
    }

    /// The mixes from `saved` when it was made over the config's current
    /// `mixes` (last writer wins), else the config's. A mix whose layer
    /// names no sound of `sounds`, or whose id is a sound's, is left out
    /// (noted for the log) rather than keeping the speaker from starting.
    init(sounds: [CatalogEntry], configMixes: [MixDefinition], saved: SavedMixes?) {
        self.sounds = sounds
        let source = SavedMixes.inForce(configMixes: configMixes, saved: saved)
        var origin = "mixes"
        if let saved {
            if saved.configBasis == configMixes {
                configBasis = saved.configBasis
                origin = "saved mixes"
            } else {
                notes.append("config mixes changed since the mixes saved over MQTT: the config's apply")
            }
        }
        mixes = []
        for (i, mix) in source.enumerated() {
            if let (path, message) = problem(with: mix, replacing: nil) {
                notes.append("\(origin)[\(i)].\(path): \(message); mix \"\(mix.id)\" left out")
            } else {
                mixes.append(mix)
            }
        }
    }

    /// The catalog: the sounds, then the mixes with their layers.
    public var catalog: [CatalogEntry] { sounds + mixes.map(CatalogEntry.init(mix:)) }

    /// The mix with `id`, or nil.
    public func mix(id: String) -> MixDefinition? { mixes.first { $0.id == id } }

    /// The layers mix `id` plays at now: its playing levels, else the preset's; nil when `id` is no mix.
    public func playingLayers(id: String) -> [MixLayer]? {
        guard let mix = mix(id: id) else { return nil }
        if let live, live.mixID == id { return live.layers }
        return mix.layers
    }

    /// What keeps `mix` out of the catalog (`(key path, message)`), or nil:
    /// its shape, an id taken by a sound, a layer naming no sound (mixes are
    /// not layers), or the catalog already holding `ConfigDecoder.maxMixes`
    /// mixes. `replacing`: the id of the mix it replaces, if any.
    func problem(with mix: MixDefinition, replacing: String?) -> (path: String, message: String)? {
        if let structural = mix.structuralProblem() { return structural }
        if sounds.contains(where: { $0.id == mix.id }) {
            return ("id", "\"\(mix.id)\" is the id of a sound")
        }
        for (i, layer) in mix.layers.enumerated() where !sounds.contains(where: { $0.id == layer.soundID }) {
            let what = mixes.contains { $0.id == layer.soundID } ? "a mix, which cannot be a layer" : "no sound in the catalog"
            return ("layers[\(i)].soundID", "\"\(layer.soundID)\" is \(what)")
        }
        if replacing == nil && mixes.count >= ConfigDecoder.maxMixes && !mixes.contains(where: { $0.id == mix.id }) {
            return ("mixID", "the catalog holds \(ConfigDecoder.maxMixes) mixes already")
        }
        return nil
    }

    /// What goes to the state directory: the mixes once MQTT changed them, else nil.
    public var saved: SavedMixes? { configBasis.map { SavedMixes(mixes: mixes, configBasis: $0) } }

    /// Creates or replaces `mix` (checked by `problem(with:replacing:)` first).
    mutating func store(_ mix: MixDefinition, configMixes: [MixDefinition]) {
        if configBasis == nil { configBasis = configMixes }
        if let index = mixes.firstIndex(where: { $0.id == mix.id }) {
            mixes[index] = mix
        } else {
            mixes.append(mix)
        }
        if live?.mixID == mix.id { live = nil }
    }

    /// Removes the mix `id` (it exists).
    mutating func remove(id: String, configMixes: [MixDefinition]) {
        if configBasis == nil { configBasis = configMixes }
        mixes.removeAll { $0.id == id }
        if live?.mixID == id { live = nil }
        if problem?.mixID == id { problem = nil }
    }
}

/// A mix layer the engine could not play, and why.
public struct DroppedLayer: Equatable, Sendable {
    public var soundID: String
    public var reason: String

    public init(soundID: String, reason: String) {
        self.soundID = soundID
        self.reason = reason
    }
}
