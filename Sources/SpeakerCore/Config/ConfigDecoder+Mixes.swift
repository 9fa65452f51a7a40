// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

extension ConfigDecoder {
    /// The most mixes the catalog holds (config and `saveMix` alike), so the
    /// retained `catalog` and Home Assistant's select stay small.
    public static let maxMixes = 32

    /// Reads `mixes`: an array of `{"id","name","summary"?,"layers":[{"soundID","level"}]}`,
    /// at most `maxMixes`, each well formed (`MixDefinition.structuralProblem`),
    /// ids unique, no unknown keys. Whether the layers' sounds exist is
    /// checked when the catalog is known (`MixesState`).
    static func mixes(_ raw: JSONValue) throws(ConfigError) -> [MixDefinition] {
        guard case .array(let items) = raw else {
            throw ConfigError(path: "mixes", message: "expected an array, got \(raw.kindDescription)")
        }
        guard items.count <= maxMixes else {
            throw ConfigError(path: "mixes", message: "at most \(maxMixes) mixes, got \(items.count)")
        }
        var mixes: [MixDefinition] = []
        for (i, item) in items.enumerated() {
            let path = "mixes[\(i)]"
            if case .object(let members) = item {
                let known: Set<String> = ["id", "name", "summary", "layers"]
                if let unknown = members.first(where: { !known.contains($0.key) }) {
                    throw ConfigError(path: "\(path).\(unknown.key)", message: "unknown key; expected one of id, layers, name, summary")
                }
                if case .array(let layers)? = item["layers"] {
                    for (j, layer) in layers.enumerated() {
                        guard case .object(let lm) = layer else { continue }
                        if let unknown = lm.first(where: { $0.key != "soundID" && $0.key != "level" }) {
                            throw ConfigError(path: "\(path).layers[\(j)].\(unknown.key)", message: "unknown key; expected one of level, soundID")
                        }
                    }
                }
            }
            switch MixDefinition.decode(item) {
            case .success(let mix):
                if mixes.contains(where: { $0.id == mix.id }) {
                    throw ConfigError(path: "\(path).id", message: "\"\(mix.id)\" is already the id of another mix")
                }
                mixes.append(mix)
            case .failure(let error):
                throw ConfigError(path: error.path.isEmpty ? path : "\(path).\(error.path)", message: error.message)
            }
        }
        return mixes
    }
}
