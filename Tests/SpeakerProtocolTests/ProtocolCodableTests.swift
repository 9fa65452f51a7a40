// SPDX-License-Identifier: Apache-2.0
import Foundation
import SpeakerProtocol
import Testing

/// The `Codable` conformances (for Foundation clients such as an iOS app)
/// agree with the `.json` the speaker publishes: same members, same values,
/// both directions.
@Suite struct ProtocolCodableTests {
    /// Objects with members sorted, so key order (which JSONEncoder does not keep) does not matter.
    func normalized(_ v: JSONValue) -> JSONValue {
        switch v {
        case .object(let members):
            return .object(members.map { (key: $0.key, value: normalized($0.value)) }.sorted { $0.key < $1.key })
        case .array(let items): return .array(items.map(normalized))
        default: return v
        }
    }

    func agree<T: Codable & Equatable>(_ value: T, _ json: JSONValue, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let encoded = try JSONEncoder().encode(value)
        let parsed = try JSONParser().parse(Array(encoded))
        #expect(normalized(parsed) == normalized(json), "Codable wrote \(String(decoding: encoded, as: UTF8.self)), .json is \(json.jsonText)",
                sourceLocation: sourceLocation)
        let decoded = try JSONDecoder().decode(T.self, from: Data(json.serialized()))
        #expect(decoded == value, sourceLocation: sourceLocation)
        // The same init(from:) without Foundation, as a reader such as SpeakerWatch decodes.
        #expect(try T(json: json) == value, "JSONValueDecoder", sourceLocation: sourceLocation)
    }

    /// `JSONValueDecoder`'s failures say where: the key path and what was wrong.
    @Test func theFoundationFreeDecoderNamesWhereAPayloadIsWrong() throws {
        var json = Self.absolute.json
        guard case .object(var members) = json else { Issue.record("not an object"); return }
        members = members.map { $0.key == "volume" ? (key: "volume", value: .object([("control", .string("absolute"))])) : $0 }
        json = .object(members)
        #expect(throws: DecodingError.self) { try DeviceDescriptor(json: json) }
        do {
            _ = try DeviceDescriptor(json: json)
        } catch DecodingError.keyNotFound(let key, let context) {
            #expect(key.stringValue == "level" && context.codingPath.map(\.stringValue) == ["volume"])
        }
        let whole = try JSONParser().parse(#"{"id":"c","ok":true,"revision":1.5}"#)
        #expect(throws: DecodingError.self, "a revision is a whole number") { try CommandResult(json: whole) }
        let list = try JSONParser().parse(#"[{"id":"a","name":"A","summary":""},{"id":"b","name":7,"summary":""}]"#)
        do {
            _ = try [CatalogEntry](json: list)
            Issue.record("decoded a number as a name")
        } catch DecodingError.typeMismatch(_, let context) {
            #expect(context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue } == ["1", "name"])
        }
    }

    static let absolute = DeviceDescriptor(id: "kitchen", name: "Kitchen speaker", volume: .absolute(level: 0.42, step: 0.05),
                                           audio: .ok, software: "ambient-speaker 0.1.0", epoch: "5e2c0f1d9a7b3c44")
    static let relative = DeviceDescriptor(id: "hall", name: "Hall", volume: .relative, audio: .unavailable, software: "x")

    @Test func deviceCatalogAndSession() throws {
        try agree(Self.absolute, Self.absolute.json)
        try agree(Self.relative, Self.relative.json)
        #expect(Self.relative.json["volume"] == .object([("control", .string("relative"))]), "no level for a relative device")
        let entry = CatalogEntry(id: "rain", name: "Rain on the roof", summary: "steady rain, \"soft\"")
        try agree(entry, entry.json)
        for id in ["5c1f0000-0000-4000-8000-000000000000", nil] as [String?] {
            let session = SessionAttributes(
                id: id, soundID: "rain", soundName: "Rain", isPlaying: id != nil, intendsPlayback: id != nil,
                updatedAt: "2026-11-29T12:00:00.123Z", clockSynced: false, revision: 1_234_567, ended: id == nil,
                commands: ["play", "toggle"], devices: [Self.absolute, Self.relative])
            try agree(session, session.json)
        }
    }

    @Test func resultsEventsAndCommands() throws {
        let results: [CommandResult] = [
            .accepted(id: "c-42", revision: 1235, level: nil),
            .accepted(id: "c-43", revision: 1236, level: 1.0),
            .rejected(CommandRejection(id: "c-44", code: .unsupported, message: "step-only")),
            .rejected(CommandRejection(id: nil, code: .tooLarge, message: "5000 bytes")),
        ]
        for r in results { try agree(r, r.json) }
        for code in CommandErrorCode.allCases {
            let r = CommandResult.rejected(CommandRejection(id: "x", code: code, message: "m"))
            try agree(r, r.json)
        }
        for e in [InputEventPayload.button(name: "playPause", gesture: "long"), .knob(delta: -3)] { try agree(e, e.json) }
        let commands: [CommandEnvelope] = [
            .init(id: "a", command: .play), .init(id: "b", command: .select(soundID: "rain")),
            .init(id: "c", command: .setVolume(level: 0.3)), .init(id: "d", command: .volumeUp(steps: 3)),
            .init(id: "e", command: .volumeDown(steps: 20)), .init(id: "f", command: .stop),
        ]
        for c in commands {
            try agree(c, c.json)
            // The speaker's own decoder reads what a Codable client writes.
            let bytes = Array(try JSONEncoder().encode(c))
            #expect(try CommandDecoder().decode(bytes).get() == c)
        }
    }

    @Test func codableRejectsWhatTheSpeakerRejects() {
        for bad in [#"{"id":"","action":"play"}"#, #"{"id":"x","action":"dance"}"#, #"{"id":"x","action":"volumeUp","steps":21}"#,
                    #"{"id":"x","action":"select"}"#, #"{"action":"play"}"#] {
            #expect(throws: (any Error).self, "\(bad)") { try JSONDecoder().decode(CommandEnvelope.self, from: Data(bad.utf8)) }
            #expect((try? CommandDecoder().decode(Array(bad.utf8)).get()) == nil, "\(bad)")
        }
    }
}
