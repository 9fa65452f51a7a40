// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol
import SpeakerSystem
#if canImport(Glibc)
import Glibc
#endif

/// Reading the sounds directory: which files there are, whether each one
/// decodes, what it is called. Main thread (disk I/O); used by `SoundCatalog`.
enum SoundDirectory {
    /// Regular, non-hidden file names in `directory` that are neither sidecars
    /// (`.json`) nor artwork (`.png`, `.jpg`, `.jpeg`), sorted; or why it can't be read.
    static func list(_ directory: String) -> (names: [String], problem: String?) {
        guard let dir = opendir(directory) else {
            return ([], "cannot read \(directory): \(String(cString: strerror(errno)))")
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasPrefix(".") || name.lowercased().hasSuffix(".json") || ArtworkFiles.isImage(name) { continue }
            var st = stat()
            let path = directory.hasSuffix("/") ? directory + name : directory + "/" + name
            guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
            names.append(name)
        }
        return (names.sorted(), nil)
    }

    /// Opens `path`, decodes its first second and its last frames, and
    /// describes it; or says why it can't be played.
    static func probe(path: String, fileName: String) -> Result<SoundCatalog.Sound, SoundFileError> {
        let reader: SoundFileReader
        do { reader = try SoundFileReader(path: path) } catch { return .failure(error) }
        let probeFrames = min(reader.frames, reader.sampleRate)
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2 * probeFrames)
        defer { buffer.deallocate() }
        let got = reader.readStereo(into: buffer, count: probeFrames)
        if got < probeFrames {
            return .failure(SoundFileError(path: path, reason: "corrupt: decoding failed after \(got) frames (\(reader.lastError))"))
        }
        let tail = min(reader.frames, 4096)
        do { try reader.seek(to: reader.frames - tail) } catch { return .failure(error) }
        let gotTail = reader.readStereo(into: buffer, count: min(tail, probeFrames))
        if gotTail < min(tail, probeFrames) {
            return .failure(SoundFileError(path: path, reason: "corrupt or truncated: the last \(tail) of \(reader.frames) frames do not decode (\(reader.lastError))"))
        }
        let seconds = Double(reader.frames) / Double(reader.sampleRate)
        let details = "\(reader.formatName), \(reader.sampleRate) Hz, \(reader.channels == 1 ? "mono" : "stereo"), \(Self.duration(seconds))"
        let base = Self.baseName(fileName)
        let name = reader.title ?? base.replacingSeparators
        let summary = reader.comment ?? "Sound file \(fileName) (\(details))"
        return .success(SoundCatalog.Sound(id: Self.id(fromFileName: fileName), name: name, summary: summary,
                                           origin: .file(path: path, details: details)))
    }

    /// `Ocean Surf.flac` → `ocean-surf`: lower-case letters and digits, any
    /// other run of characters becomes one `-`, at most 64 characters.
    static func id(fromFileName fileName: String) -> String {
        var out = ""
        var pendingDash = false
        for scalar in baseName(fileName).unicodeScalars {
            let c = Character(scalar)
            if scalar.isASCII, c.isLetter || c.isNumber {
                if pendingDash && !out.isEmpty { out.append("-") }
                pendingDash = false
                out.append(c.lowercased())
            } else {
                pendingDash = true
            }
        }
        return String(out.prefix(64))
    }

    /// The sidecar `NAME.json` next to `NAME.ext`: `{"name": …, "summary": …}`
    /// (both optional). nil when there is none; a failure text when it is broken.
    static func sidecar(for path: String) -> Sidecar {
        let jsonPath = baseName(path) + ".json"
        guard access(jsonPath, F_OK) == 0 else { return .none }
        let bytes: [UInt8]
        do { bytes = try FileIO.read(path: jsonPath, maxBytes: 65_536) } catch { return .broken("\(jsonPath): \(error); ignored") }
        let value: JSONValue
        do { value = try JSONParser().parse(bytes) } catch { return .broken("\(jsonPath): not JSON (\(error)); ignored") }
        guard case .object = value else { return .broken("\(jsonPath): expected an object with \"name\" and \"summary\"; ignored") }
        let name = value["name"]?.stringValue?.trimmingSpaces
        let summary = value["summary"]?.stringValue?.trimmingSpaces
        return .found(name: name?.isEmpty == false ? name : nil, summary: summary?.isEmpty == false ? summary : nil)
    }

    /// What `sidecar(for:)` found.
    enum Sidecar {
        case none
        case found(name: String?, summary: String?)
        case broken(String)
    }

    /// `dir/Name.flac` → `dir/Name` (the last extension removed, if any).
    static func baseName(_ path: String) -> String {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/"), dot != path.startIndex,
              path[path.index(before: dot)] != "/" else { return path }
        return String(path[..<dot])
    }

    static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        return s >= 60 ? "\(s / 60) min \(s % 60) s" : String(format1: seconds) + " s"
    }
}

extension String {
    /// `ocean_surf-night` → `ocean surf night`.
    var replacingSeparators: String {
        String(map { $0 == "_" || $0 == "-" ? " " : $0 })
    }

    /// A number with one decimal, e.g. `2.5`.
    init(format1 value: Double) {
        let tenths = Int((value * 10).rounded())
        self = "\(tenths / 10).\(tenths % 10)"
    }
}
