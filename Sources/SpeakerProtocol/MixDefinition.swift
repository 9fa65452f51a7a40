// SPDX-License-Identifier: Apache-2.0
/// One layer of a mix: a sound (built-in or file, never another mix) at its
/// own level in [0, 1] (on the volume curve, like the master level).
public struct MixLayer: Equatable, Sendable, JSONWritable {
    public var soundID: String
    public var level: Double

    public init(soundID: String, level: Double) {
        self.soundID = soundID
        self.level = level
    }

    /// Writes `{"soundID","level"}`.
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("soundID"); w.string(soundID)
        w.key("level"); w.number(level)
        w.endObject()
    }

    public static var typicalJSONBytes: Int { 40 }

    /// Writes `layers` as a JSON array.
    public static func write(_ layers: [MixLayer], to w: inout JSONWriter) {
        w.beginArray()
        for layer in layers { layer.write(to: &w) }
        w.endArray()
    }

    /// The layers as a JSON tree (for the state file).
    public static func json(_ layers: [MixLayer]) -> JSONValue {
        .array(layers.map { .object([("soundID", .string($0.soundID)), ("level", .number($0.level))]) })
    }
}

/// A mix: up to `maxLayers` sounds playing at once, each at its own level,
/// kept as a catalog entry (config `mixes`, or `saveMix` over MQTT).
public struct MixDefinition: Equatable, Sendable {
    /// The most layers a mix may have (the renderer mixes them in one voice).
    public static let maxLayers = 4

    public var id: String
    public var name: String
    public var summary: String?
    public var layers: [MixLayer]

    public init(id: String, name: String, summary: String? = nil, layers: [MixLayer]) {
        self.id = id
        self.name = name
        self.summary = summary
        self.layers = layers
    }

    /// The mix as a JSON tree, keys as in config (`id`, `name`, `summary`?, `layers`).
    public var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [("id", .string(id)), ("name", .string(name))]
        if let summary { members.append(("summary", .string(summary))) }
        members.append(("layers", MixLayer.json(layers)))
        return .object(members)
    }

    /// The summary shown in the catalog: the given one, else the layers' ids.
    public var catalogSummary: String {
        summary ?? "Mix of " + layers.map(\.soundID).joined(separator: ", ")
    }

    /// Structural checks shared by config, `saveMix` and the state file:
    /// `id` a usable id, `name` non-empty, 1…4 layers, each with a non-empty
    /// `soundID` used once and a finite `level` in [0, 1]. Returns the first
    /// problem as `(key path below the mix, message)`, nil when well formed.
    /// Whether the sounds exist is the core's check (it knows the catalog).
    public func structuralProblem() -> (path: String, message: String)? {
        if !Self.isValidID(id) {
            return ("id", "must be 1-64 characters of a-z, 0-9, \"-\" or \"_\", got \"\(id)\"")
        }
        if name.isEmpty || name.utf8.count > 64 { return ("name", "must be 1-64 bytes") }
        if let summary, summary.utf8.count > 200 { return ("summary", "must be at most 200 bytes") }
        if layers.isEmpty { return ("layers", "a mix needs at least one layer") }
        if layers.count > Self.maxLayers {
            return ("layers", "at most \(Self.maxLayers) layers, got \(layers.count)")
        }
        var seen = Set<String>()
        for (i, layer) in layers.enumerated() {
            if layer.soundID.isEmpty { return ("layers[\(i)].soundID", "must be a non-empty string") }
            if !seen.insert(layer.soundID).inserted {
                return ("layers[\(i)].soundID", "\"\(layer.soundID)\" is already a layer of this mix")
            }
            if !layer.level.isFinite || layer.level < 0 || layer.level > 1 {
                return ("layers[\(i)].level", "must be a number in [0, 1], got \(layer.level)")
            }
        }
        return nil
    }

    /// 1–64 of `a-z 0-9 - _` (the shape of the catalog's own ids).
    public static func isValidID(_ s: String) -> Bool {
        let bytes = s.utf8
        return (1...64).contains(bytes.count) && bytes.allSatisfy {
            ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D || $0 == 0x5F
        }
    }

    /// Reads a mix from JSON (config, `saveMix`, the state file): the shapes
    /// are checked here, the values by `structuralProblem()`. Errors name
    /// the key path below the mix; `idKey` is `id` in config, `mixID` in a command.
    public static func decode(_ value: JSONValue, idKey: String = "id") -> Result<MixDefinition, MixDecodeError> {
        guard case .object = value else { return .failure(MixDecodeError(path: "", message: "expected an object, got \(value.kindDescription)", malformed: true)) }
        func string(_ key: String, required: Bool) -> Result<String?, MixDecodeError> {
            guard let field = value[key], field != .null || required else { return required ? .failure(MixDecodeError(path: key, message: "missing", malformed: true)) : .success(nil) }
            guard let s = field.stringValue else { return .failure(MixDecodeError(path: key, message: "expected a string, got \(field.kindDescription)", malformed: true)) }
            return .success(s)
        }
        let id: String, name: String, summary: String?
        switch string(idKey, required: true) { case .success(let s): id = s ?? ""; case .failure(let e): return .failure(e) }
        switch string("name", required: true) { case .success(let s): name = s ?? ""; case .failure(let e): return .failure(e) }
        switch string("summary", required: false) { case .success(let s): summary = s; case .failure(let e): return .failure(e) }
        guard let layersValue = value["layers"] else { return .failure(MixDecodeError(path: "layers", message: "missing", malformed: true)) }
        guard case .array(let items) = layersValue else {
            return .failure(MixDecodeError(path: "layers", message: "expected an array, got \(layersValue.kindDescription)", malformed: true))
        }
        var layers: [MixLayer] = []
        for (i, item) in items.enumerated() {
            guard case .object = item else {
                return .failure(MixDecodeError(path: "layers[\(i)]", message: "expected an object, got \(item.kindDescription)", malformed: true))
            }
            guard let sound = item["soundID"]?.stringValue else {
                return .failure(MixDecodeError(path: "layers[\(i)].soundID", message: "expected a string", malformed: true))
            }
            guard let level = item["level"]?.numberValue else {
                return .failure(MixDecodeError(path: "layers[\(i)].level", message: "expected a number", malformed: true))
            }
            layers.append(MixLayer(soundID: sound, level: level))
        }
        let mix = MixDefinition(id: id, name: name, summary: summary, layers: layers)
        if let (path, message) = mix.structuralProblem() {
            return .failure(MixDecodeError(path: path == "id" ? idKey : path, message: message, malformed: false))
        }
        return .success(mix)
    }
}

/// Why a mix could not be read: the key path below the mix, the message, and
/// whether it was the wrong shape (`malformed`) or a value out of range.
public struct MixDecodeError: Error, Equatable, Sendable, CustomStringConvertible {
    public var path: String
    public var message: String
    public var malformed: Bool

    public init(path: String, message: String, malformed: Bool) {
        self.path = path
        self.message = message
        self.malformed = malformed
    }

    public var description: String { path.isEmpty ? message : "\(path): \(message)" }
}
