// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// The mixes as changed over MQTT (`saveMix`, `deleteMix`), kept in
/// `{stateDirectory}/mixes.json` so they survive restarts, with the config
/// `mixes` value they were made over.
///
/// Last writer wins: at start the saved mixes apply while the config file's
/// `mixes` still equals `configBasis`; once the file's value differs, the
/// file's new value applies (and the saved one is dropped at the next
/// change). Stored as `{"version":1,"configBasis":[mix…],"mixes":[mix…]}`.
/// Pure value; any thread.
public struct SavedMixes: Equatable, Sendable {
    public static let version = 1
    /// The largest file read back (32 mixes of 4 layers fit well within it).
    public static let maxFileBytes = 65_536

    /// The mixes in force, in catalog order.
    public var mixes: [MixDefinition]
    /// The config `mixes` value when the MQTT change was made.
    public var configBasis: [MixDefinition]

    public init(mixes: [MixDefinition], configBasis: [MixDefinition]) {
        self.mixes = mixes
        self.configBasis = configBasis
    }

    /// The mixes in force: `saved`'s while it was made over `configMixes`
    /// (last writer wins), else the config's.
    public static func inForce(configMixes: [MixDefinition], saved: SavedMixes?) -> [MixDefinition] {
        guard let saved, saved.configBasis == configMixes else { return configMixes }
        return saved.mixes
    }

    /// The file's bytes: the JSON document and a newline.
    public var fileBytes: [UInt8] {
        let value = JSONValue.object([
            ("version", .number(Double(Self.version))),
            ("configBasis", .array(configBasis.map(\.json))),
            ("mixes", .array(mixes.map(\.json))),
        ])
        return value.serialized() + [UInt8(ascii: "\n")]
    }

    /// Why a stored file could not be used.
    public struct DecodeError: Error, Equatable, Sendable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }

    /// Parses and validates a stored file; anything unexpected is an error
    /// naming the member (`mixes[2].layers[0].level: …`), never a guess.
    public static func decode(_ bytes: [UInt8]) throws(DecodeError) -> SavedMixes {
        let value: JSONValue
        do {
            value = try JSONParser(maxDepth: 8).parse(bytes)
        } catch {
            throw DecodeError(reason: "not valid JSON (\(error))")
        }
        guard case .object(let members) = value else { throw DecodeError(reason: "expected a JSON object") }
        if let unknown = members.first(where: { !["version", "configBasis", "mixes"].contains($0.key) }) {
            throw DecodeError(reason: "unknown member \"\(unknown.key)\"")
        }
        guard value["version"]?.numberValue == Double(version) else {
            throw DecodeError(reason: "version must be \(version), got \(value["version"]?.jsonText ?? "nothing")")
        }
        func list(_ key: String) throws(DecodeError) -> [MixDefinition] {
            guard case .array(let items)? = value[key] else { throw DecodeError(reason: "\(key) must be an array") }
            guard items.count <= ConfigDecoder.maxMixes else {
                throw DecodeError(reason: "\(key): at most \(ConfigDecoder.maxMixes) mixes, got \(items.count)")
            }
            var out: [MixDefinition] = []
            for (i, item) in items.enumerated() {
                switch MixDefinition.decode(item) {
                case .success(let mix):
                    guard !out.contains(where: { $0.id == mix.id }) else {
                        throw DecodeError(reason: "\(key)[\(i)].id: \"\(mix.id)\" appears twice")
                    }
                    out.append(mix)
                case .failure(let error):
                    throw DecodeError(reason: "\(key)[\(i)]" + (error.path.isEmpty ? ": " : ".\(error.path): ") + error.message)
                }
            }
            return out
        }
        return SavedMixes(mixes: try list("mixes"), configBasis: try list("configBasis"))
    }
}
