// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// The artwork domain: the images taken at start, by sound id, and the
/// refusals with their reasons. Fixed for the life of the process (the
/// adapter reads the files once, like the catalog); which entry shows which
/// image is decided here, so a mix saved later gets one without file I/O.
public struct ArtworkState: Equatable, Sendable {
    /// The taken images by the id of the sound they belong to.
    public private(set) var images: [String: ArtworkImage] = [:]
    /// Why a sound's image was refused, by sound id.
    public private(set) var refused: [String: String] = [:]

    public init() {}

    /// Takes the first valid file per sound of `soundIDs`; notes for the log
    /// say what was refused or ignored and why. Files naming no sound are
    /// ignored with a note.
    init(files: [ArtworkFile], soundIDs: Set<String>) {
        var notes: [(CoreLogLevel, String)] = []
        for file in files {
            guard soundIDs.contains(file.soundID) else {
                notes.append((.notice, "artwork \(file.path): no sound \"\(file.soundID)\" in the catalog; ignored"))
                continue
            }
            if images[file.soundID] != nil {
                notes.append((.notice, "artwork \(file.path): \"\(file.soundID)\" has an image already; ignored"))
                continue
            }
            let outcome: Result<ArtworkImage, ArtworkRefusal>
            switch file.contents {
            case .bytes(let bytes): outcome = ArtworkImage.validate(bytes)
            case .unreadable(let reason): outcome = .failure(ArtworkRefusal(reason: "cannot be read: \(reason)"))
            }
            switch outcome {
            case .success(let image):
                images[file.soundID] = image
                refused[file.soundID] = nil
            case .failure(let refusal):
                if refused[file.soundID] == nil { refused[file.soundID] = "\(Self.fileName(file.path)): \(refusal.reason)" }
                notes.append((.warning, "artwork \(file.path) refused: \(refusal.reason)"))
            }
        }
        self.notes = notes
    }

    /// What loading said, logged once at start.
    var notes: [(CoreLogLevel, String)] = []

    public static func == (a: ArtworkState, b: ArtworkState) -> Bool {
        a.images == b.images && a.refused == b.refused && a.notes.map(\.1) == b.notes.map(\.1)
    }

    var isEmpty: Bool { images.isEmpty && refused.isEmpty }

    /// The image `entry` shows: a sound's own; a mix's is that of its first
    /// layer with one (a mix has no file of its own).
    func image(for entry: CatalogEntry) -> ArtworkImage? {
        if let layers = entry.layers {
            return layers.lazy.compactMap { images[$0.soundID] }.first
        }
        return images[entry.id]
    }

    /// `catalog` saying which entries have an image and why a sound's was refused.
    func decorate(_ catalog: [CatalogEntry]) -> [CatalogEntry] {
        guard !isEmpty else { return catalog }
        return catalog.map { entry in
            var entry = entry
            entry.artwork = image(for: entry) != nil
            entry.artworkProblem = entry.layers == nil ? refused[entry.id] : nil
            return entry
        }
    }

    /// The images to publish for `catalog`, by entry id.
    func published(for catalog: [CatalogEntry]) -> [String: [UInt8]] {
        guard !images.isEmpty else { return [:] }
        var out: [String: [UInt8]] = [:]
        for entry in catalog { if let image = image(for: entry) { out[entry.id] = image.bytes } }
        return out
    }

    static func fileName(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }
}
