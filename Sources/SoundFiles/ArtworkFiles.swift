// SPDX-License-Identifier: Apache-2.0
import SpeakerSystem
#if canImport(Glibc)
import Glibc
#endif

/// Reading the catalog's image files: `NAME.png`, `NAME.jpg` or
/// `NAME.jpeg` beside a file sound `NAME.flac`, and `{id}.png` (or `.jpg`,
/// `.jpeg`) in the artwork directory for a built-in sound. Only reads: the
/// core takes or refuses what was read. Main thread (disk I/O), once at start.
public enum ArtworkFiles {
    /// One image file found, with what reading it gave.
    public struct Found: Sendable, Equatable {
        public var soundID: String
        public var path: String
        /// The bytes, or why they could not be read.
        public var bytes: Result<[UInt8], ReadFailure>
    }

    /// Why a file could not be read.
    public struct ReadFailure: Error, Sendable, Equatable {
        public var reason: String
    }

    /// The image extensions, in the order they are looked for.
    static let extensions = ["png", "jpg", "jpeg"]

    /// The adapter reads at most this much (a file beyond is reported unreadable, never loaded whole).
    static let readLimit = 1 << 20

    /// Every image file for `catalog`'s sounds, in catalog order.
    public static func find(for catalog: SoundCatalog, artworkDirectory: String) -> [Found] {
        var found: [Found] = []
        for sound in catalog.sounds {
            let base: String
            switch sound.origin {
            case .builtIn: base = artworkDirectory.hasSuffix("/") ? artworkDirectory + sound.id : artworkDirectory + "/" + sound.id
            case .file(let path, _): base = SoundDirectory.baseName(path)
            }
            for ext in extensions {
                let path = base + "." + ext
                guard access(path, F_OK) == 0 else { continue }
                found.append(Found(soundID: sound.id, path: path, bytes: read(path)))
            }
        }
        return found
    }

    static func read(_ path: String) -> Result<[UInt8], ReadFailure> {
        do { return .success(try FileIO.read(path: path, maxBytes: readLimit)) } catch {
            return .failure(ReadFailure(reason: "\(error)"))
        }
    }

    /// Whether `name` is an image file (kept out of the sounds).
    static func isImage(_ name: String) -> Bool {
        let lower = name.lowercased()
        return extensions.contains { lower.hasSuffix("." + $0) }
    }
}
