// SPDX-License-Identifier: Apache-2.0
import Ambience
import SpeakerProtocol
#if canImport(Glibc)
import Glibc
#endif

/// The sounds the speaker can play, in playback order: the built-in generated
/// sounds, then every readable file in the sounds directory (sorted by file
/// name), plus the files that were skipped and why.
///
/// Built once at start-up on the main thread (it reads the directory and
/// opens each file); afterwards immutable and usable from any thread.
public struct SoundCatalog: Sendable {
    /// Where a sound comes from.
    public enum Origin: Sendable, Equatable {
        case builtIn(BuiltInSound)
        /// A file: its path and a description (format, rate, channels, length).
        case file(path: String, details: String)
    }

    /// One playable sound.
    public struct Sound: Sendable, Equatable {
        /// Stable id: the built-in's id, or derived from the file name (`Ocean Surf.flac` → `ocean-surf`).
        public var id: String
        /// Display name: the sidecar's `name`, else the file's title tag, else the file name.
        public var name: String
        /// One line: the sidecar's `summary`, else the comment tag, else the file's details.
        public var summary: String
        public var origin: Origin
    }

    /// A file in the sounds directory that is not in the catalog.
    public struct Skipped: Sendable, Equatable {
        /// The file's path.
        public var path: String
        /// Why, e.g. `libsndfile cannot read it: File contains data in an unknown format.`
        public var reason: String
    }

    /// The sounds in playback order (built-ins first).
    public private(set) var sounds: [Sound]
    /// The files that were skipped, with their reasons, in file-name order.
    public private(set) var skipped: [Skipped]
    /// Problems that did not keep a sound out (an unreadable sidecar), for the log.
    public private(set) var notes: [String] = []
    /// The sounds directory that was scanned, and whether it could be read.
    public let directory: String
    /// nil when the directory was read; else why not (e.g. it does not exist).
    public let directoryProblem: String?

    /// Only the built-in sounds.
    public static var builtInOnly: SoundCatalog {
        SoundCatalog(sounds: BuiltInSounds.all.map { Sound(builtIn: $0) }, skipped: [], directory: "", directoryProblem: nil)
    }

    init(sounds: [Sound], skipped: [Skipped], directory: String, directoryProblem: String?) {
        self.sounds = sounds
        self.skipped = skipped
        self.directory = directory
        self.directoryProblem = directoryProblem
    }

    /// Scans `directory`: every regular, non-hidden file that is not a sidecar
    /// (`*.json`) is opened with libsndfile and test-decoded; those that work
    /// become sounds, the others are listed in `skipped`. Main thread (disk I/O).
    public static func load(directory: String) -> SoundCatalog {
        var catalog = builtInOnly
        let listing = SoundDirectory.list(directory)
        catalog = SoundCatalog(sounds: catalog.sounds, skipped: [], directory: directory, directoryProblem: listing.problem)
        var used = Set(catalog.sounds.map(\.id))
        for name in listing.names {
            let path = directory.hasSuffix("/") ? directory + name : directory + "/" + name
            switch SoundDirectory.probe(path: path, fileName: name) {
            case .failure(let error):
                catalog.skipped.append(Skipped(path: path, reason: error.reason))
            case .success(var sound):
                guard !sound.id.isEmpty else {
                    catalog.skipped.append(Skipped(path: path, reason: "its name gives no usable id (letters or digits needed)"))
                    continue
                }
                guard !used.contains(sound.id) else {
                    catalog.skipped.append(Skipped(path: path, reason: "id \"\(sound.id)\" is already taken by another sound"))
                    continue
                }
                used.insert(sound.id)
                switch SoundDirectory.sidecar(for: path) {
                case .found(let name, let summary):
                    if let name { sound.name = name }
                    if let summary { sound.summary = summary }
                case .none: break
                case .broken(let problem): catalog.notes.append(problem)
                }
                catalog.sounds.append(sound)
            }
        }
        return catalog
    }

    /// The sound with `id`, or nil.
    public func sound(id: String) -> Sound? { sounds.first { $0.id == id } }

    /// The catalog as the core's entries (id, name, summary), in order.
    public var entries: [CatalogEntry] { sounds.map { CatalogEntry(id: $0.id, name: $0.name, summary: $0.summary) } }

    /// A fresh source for `sound` at `sampleRate`: a generator, or a `FileSound`
    /// (streamed when `streamer` runs, decoded in `render` otherwise). Main
    /// thread. Throws when a file can no longer be decoded.
    public static func makeSource(_ sound: Sound, sampleRate: Int, streamer: FileStreamer?, seed: UInt64? = nil) throws(SoundFileError) -> SoundSource {
        switch sound.origin {
        case .builtIn(let builtIn): return builtIn.makeSource(sampleRate: sampleRate, seed: seed)
        case .file(let path, _): return try FileSound(path: path, sampleRate: sampleRate, streamer: streamer)
        }
    }
}

extension SoundCatalog {
    /// A fresh source for `mix`: its layers made with `makeSource`, each at
    /// its level, ramping over `rampFrames`. A layer naming no sound of the
    /// catalog, or whose file cannot be decoded, is left out and listed in
    /// `dropped`; nil source when no layer is left. Main thread.
    public func makeMixSource(_ mix: MixDefinition, sampleRate: Int, rampFrames: Int, streamer: FileStreamer?,
                              seed: UInt64? = nil) -> (source: MixSource?, dropped: [(soundID: String, reason: String)]) {
        var layers: [(id: String, source: SoundSource, level: Double)] = []
        var dropped: [(soundID: String, reason: String)] = []
        for (i, layer) in mix.layers.enumerated() {
            guard let sound = sound(id: layer.soundID) else {
                dropped.append((layer.soundID, "no sound \"\(layer.soundID)\" in the catalog"))
                continue
            }
            do {
                let s = try Self.makeSource(sound, sampleRate: sampleRate, streamer: streamer, seed: seed.map { $0 &+ UInt64(i) })
                layers.append((layer.soundID, s, layer.level))
            } catch {
                dropped.append((layer.soundID, "cannot be played: \(error)"))
            }
        }
        return (layers.isEmpty ? nil : MixSource(layers: layers, rampFrames: rampFrames), dropped)
    }
}

extension SoundCatalog.Sound {
    init(builtIn: BuiltInSound) {
        self.init(id: builtIn.id, name: builtIn.name, summary: builtIn.summary, origin: .builtIn(builtIn))
    }
}
