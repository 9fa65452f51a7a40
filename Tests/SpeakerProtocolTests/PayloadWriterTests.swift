// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol
import SeededRandom
import Testing

/// The payloads write their bytes through `JSONWriter` (no `JSONValue` tree
/// per publication). These tests hold those bytes, over thousands of seeded
/// random payloads, to what a tree serialiser writes: a payload-to-tree
/// encoder and a recursive tree writer, kept below as the reference for the
/// contract's bytes. Any difference in a
/// key, its order, an escape or a number's text fails here.
@Suite struct PayloadWriterTests {
    @Test func devicesWriteWhatTheTreeSerialiserWrote() {
        var random = PayloadRandom(seed: 0xD5_1CE)
        for _ in 0..<3000 {
            let device = random.device()
            let reference = Reference.device(device)
            #expect(text(device.serialized()) == text(Reference.serialized(reference)))
            expectTreesAgree(device.json, reference)
        }
    }

    @Test func sessionsWriteWhatTheTreeSerialiserWrote() {
        var random = PayloadRandom(seed: 0x5E55_1011)
        for _ in 0..<2000 {
            let session = random.session()
            let expected = Reference.serialized(Reference.session(session))
            #expect(text(session.serialized()) == text(expected))
            // The speaker copies the device bytes it has just written for `device`.
            if let first = session.devices.first {
                #expect(text(session.serialized(writtenDevice: first.serialized())) == text(expected))
            }
            expectTreesAgree(session.json, Reference.session(session))
        }
    }

    @Test func resultsCatalogsAndEventsWriteWhatTheTreeSerialiserWrote() {
        var random = PayloadRandom(seed: 0x2E5_017)
        for _ in 0..<3000 {
            let result = random.result()
            #expect(text(result.serialized()) == text(Reference.serialized(Reference.result(result))))
            expectTreesAgree(result.json, Reference.result(result))
            let entries = (0..<random.int(0...4)).map { _ in
                random.bool() ? CatalogEntry(id: random.string(), name: random.string(), summary: random.string())
                    : CatalogEntry(mix: MixDefinition(id: random.string(), name: random.string(), summary: random.string(),
                                                      layers: random.layers()))
            }
            #expect(text(CatalogEntry.serialized(entries)) == text(Reference.serialized(.array(entries.map(Reference.entry)))))
            for entry in entries { expectTreesAgree(entry.json, Reference.entry(entry)) }
            let event: InputEventPayload = random.bool()
                ? .button(name: random.string(), gesture: random.string()) : .knob(delta: random.int(-1000...1000))
            #expect(text(event.serialized()) == text(Reference.serialized(Reference.event(event))))
            expectTreesAgree(event.json, Reference.event(event))
        }
    }

    /// Any tree (configs, state files, discovery) writes as the reference writer does.
    @Test func treesWriteWhatTheTreeSerialiserWrote() {
        var random = PayloadRandom(seed: 0x7AEE)
        for _ in 0..<2000 {
            let tree = random.tree(depth: 0)
            #expect(text(tree.serialized()) == text(Reference.serialized(tree)))
        }
    }

    @Test func numbersAreWrittenExactly() {
        let cases: [(Double, String)] = [
            (0, "0"), (-0.0, "0"), (1, "1"), (-1, "-1"), (0.1, "0.1"), (1e-7, "1e-07"), (1.0 / 3, "0.3333333333333333"),
            (0.30000000000000004, "0.30000000000000004"), (9_007_199_254_740_991, "9007199254740991"),
            (-9_007_199_254_740_991, "-9007199254740991"), (9_007_199_254_740_992, "9007199254740992.0"),
            (1e16, "1e+16"), (.nan, "null"), (.infinity, "null"), (-.infinity, "null"),
        ]
        for (n, text) in cases {
            var w = JSONWriter()
            w.number(n)
            #expect(String(decoding: w.bytes, as: UTF8.self) == text, "\(n)")
            #expect(Reference.format(n) == text, "the reference agrees on \(n)")
        }
    }

    /// The parser reads back every string the writer writes (its run-at-once
    /// path for strings without escapes, its byte path for the rest), and
    /// reports bad strings at the same offsets either way.
    @Test func stringsReadBackAndBadOnesFailWhereTheyDid() {
        var random = PayloadRandom(seed: 0x57_2146)
        for _ in 0..<3000 {
            let text = random.string()
            var w = JSONWriter()
            w.string(text)
            #expect((try? JSONParser().parse(w.bytes)) == .string(text), "\(text)")
        }
        let bad: [([UInt8], offset: Int, reason: String)] = [
            ([0x22, 0x61, 0x62, 0xFF, 0x22], 5, "invalid UTF-8 in a string"),
            ([0x22, 0x61, 0x62], 3, "unterminated string"),
            ([0x22, 0x61, 0x01, 0x62, 0x22], 3, "control character in a string"),
            ([0x22, 0x61, 0x5C, 0x78, 0x22], 4, "unknown escape"),
            ([0x22, 0xC3, 0x5C, 0x6E, 0x22], 5, "invalid UTF-8 in a string"),
        ]
        for (bytes, offset, reason) in bad {
            do {
                _ = try JSONParser().parse(bytes)
                Issue.record("parsed \(bytes)")
            } catch {
                #expect(error.offset == offset && error.reason == reason, "\(bytes): \(error)")
            }
        }
    }

    func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    /// `.json` is the published bytes parsed: the same tree as the reference
    /// builder makes (non-finite numbers, which are published as `null`, aside),
    /// and it writes back to the same bytes.
    func expectTreesAgree(_ json: JSONValue, _ reference: JSONValue, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(text(json.serialized()) == text(Reference.serialized(reference)), sourceLocation: sourceLocation)
        if Reference.allFinite(reference) { #expect(json == reference, sourceLocation: sourceLocation) }
    }
}

/// Seeded random payloads with the awkward parts: escapes, control
/// characters, non-ASCII text, fractions, integral and huge numbers,
/// non-finite levels, missing optionals.
struct PayloadRandom {
    var source: SplitMix64

    init(seed: UInt64) { source = SplitMix64(seed: seed) }

    mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(source.next() % UInt64(range.count))
    }

    mutating func bool() -> Bool { source.next() & 1 == 1 }

    static let pieces: [String] = [
        "a", "Kitchen speaker", " ", "\"", "\\", "/", "\n", "\r", "\t", "\u{0}", "\u{1}", "\u{1F}", "\u{7F}", "é",
        "中文", "🎵", "e\u{301}", "\u{2028}", "\u{FEFF}", "play", "rain, \"soft\"", "}", "{", ",", ":", "null", "0.1",
    ]

    mutating func string() -> String {
        (0..<int(0...6)).map { _ in Self.pieces[int(0...Self.pieces.count - 1)] }.joined()
    }

    mutating func optionalString() -> String? { bool() ? string() : nil }

    static let numbers: [Double] = [
        0, -0.0, 1, 0.5, 0.1, 0.05, 0.42, 1e-7, 1.0 / 3, 2.0 / 3, 0.30000000000000004, 100, 1e15, 1e16, 1e21, 1e300,
        5e-324, 9_007_199_254_740_991, 9_007_199_254_740_992, 9_007_199_254_740_994, -12.5, .nan, .infinity, -.infinity,
    ]

    mutating func number() -> Double {
        switch int(0...3) {
        case 0: return Self.numbers[int(0...Self.numbers.count - 1)]
        case 1: return Double(int(-1_000_000...1_000_000)) / 1000
        case 2: return Double(source.next() % 1_000_001) / 1_000_000
        default: return Double(bitPattern: source.next())  // anything, NaN payloads included
        }
    }

    mutating func uint64() -> UInt64 {
        switch int(0...2) {
        case 0: return UInt64(int(0...100_000))
        case 1: return source.next()
        default: return (1 << 53) &+ UInt64(bitPattern: Int64(int(-3...3)))
        }
    }

    mutating func device() -> DeviceDescriptor {
        let volume: VolumeDescriptor = bool() ? .absolute(level: number(), step: number()) : .relative
        let underruns = [0, 1, int(0...1_000_000), Int.max, Int.min, -7][int(0...5)]
        return DeviceDescriptor(id: string(), name: string(), type: bool() ? "speaker" : string(), volume: volume,
                                audio: bool() ? .ok : .unavailable, underruns: underruns, software: string(),
                                problem: optionalString(), muted: bool(), epoch: optionalString())
    }

    mutating func session() -> SessionAttributes {
        var session = SessionAttributes(
            id: optionalString(), soundID: string(), soundName: string(), isPlaying: bool(), intendsPlayback: bool(),
            updatedAt: string(), clockSynced: bool(), revision: uint64(), ended: bool(),
            commands: (0..<int(0...10)).map { _ in string() }, devices: (0..<int(0...2)).map { _ in device() },
            sleepTimer: bool() ? nil : SleepTimerAttributes(endsAt: string(), minutes: int(1...720), fadeSeconds: int(0...1800),
                                                            remainingSeconds: int(0...43_200), fading: bool()))
        if bool() { session.layers = layers() }
        return session
    }

    mutating func layers() -> [MixLayer] {
        (0..<int(0...4)).map { _ in MixLayer(soundID: string(), level: number()) }
    }

    mutating func result() -> CommandResult {
        if bool() {
            return .accepted(id: string(), revision: uint64(), level: bool() ? number() : nil, fadeSeconds: bool() ? int(0...1800) : nil)
        }
        let code = CommandErrorCode.allCases[int(0...CommandErrorCode.allCases.count - 1)]
        return .rejected(CommandRejection(id: optionalString(), code: code, message: string()))
    }

    mutating func tree(depth: Int) -> JSONValue {
        switch int(0...(depth < 4 ? 6 : 4)) {
        case 0: return .null
        case 1: return .bool(bool())
        case 2: return .number(number())
        case 3, 4: return .string(string())
        case 5: return .array((0..<int(0...4)).map { _ in tree(depth: depth + 1) })
        default: return .object((0..<int(0...4)).map { i in (key: string() + "\(i)", value: tree(depth: depth + 1)) })
        }
    }
}

/// The reference serialiser: each payload builds a `JSONValue` tree, written
/// recursively.
enum Reference {
    static func volume(_ v: VolumeDescriptor) -> JSONValue {
        switch v {
        case let .absolute(level, step, maxLevel, capSource):
            return .object([("control", .string("absolute")), ("level", .number(level)), ("step", .number(step)),
                            ("maxLevel", .number(maxLevel)), ("capSource", .string(capSource.rawValue))])
        case .relative:
            return .object([("control", .string("relative"))])
        }
    }

    static func device(_ d: DeviceDescriptor) -> JSONValue {
        // Built in steps: Swift 6.0's type checker gives up on it as one expression.
        var members: [(key: String, value: JSONValue)] = [
            ("id", .string(d.id)), ("name", .string(d.name)), ("type", .string(d.type)),
            ("volume", volume(d.volume)), ("muted", .bool(d.muted)), ("audio", .string(d.audio.rawValue)),
            ("underruns", .number(Double(d.underruns))), ("software", .string(d.software)),
        ]
        if let epoch = d.epoch { members.append(("epoch", .string(epoch))) }
        var nightCap = JSONValue.null
        if let cap = d.nightCap {
            nightCap = .object([("from", .string(cap.from)), ("to", .string(cap.to)),
                                ("maxLevel", .number(cap.maxLevel)), ("active", .bool(cap.active))])
        }
        members.append(("nightCap", nightCap))
        if let problem = d.problem { members.append(("problem", .string(problem))) }
        return .object(members)
    }

    static func entry(_ e: CatalogEntry) -> JSONValue {
        .object([("id", .string(e.id)), ("name", .string(e.name)), ("summary", .string(e.summary)),
                 ("kind", .string(e.kind.rawValue))] + (e.layers.map { [("layers", layers($0))] } ?? []))
    }

    static func layers(_ l: [MixLayer]) -> JSONValue {
        .array(l.map { .object([("soundID", .string($0.soundID)), ("level", .number($0.level))]) })
    }

    static func session(_ s: SessionAttributes) -> JSONValue {
        .object([
            ("id", s.id.map { .string($0) } ?? .null),
            ("soundID", .string(s.soundID)), ("soundName", .string(s.soundName)),
            ("layers", s.layers.map(layers) ?? .null),
            ("isPlaying", .bool(s.isPlaying)), ("intendsPlayback", .bool(s.intendsPlayback)),
            ("updatedAt", .string(s.updatedAt)), ("clockSynced", .bool(s.clockSynced)),
            ("revision", .number(Double(s.revision))), ("ended", .bool(s.ended)),
            ("commands", .array(s.commands.map { .string($0) })),
            ("devices", .array(s.devices.map(device))),
            ("sleepTimer", s.sleepTimer.map {
                .object([("endsAt", .string($0.endsAt)), ("minutes", .number(Double($0.minutes))),
                         ("fadeSeconds", .number(Double($0.fadeSeconds))),
                         ("remainingSeconds", .number(Double($0.remainingSeconds))), ("fading", .bool($0.fading))])
            } ?? .null),
        ])
    }

    static func result(_ r: CommandResult) -> JSONValue {
        switch r {
        case let .accepted(id, revision, level, fadeSeconds):
            var members: [(key: String, value: JSONValue)] = [("id", .string(id)), ("ok", .bool(true)), ("revision", .number(Double(revision)))]
            if let level { members.append(("level", .number(level))) }
            if let fadeSeconds { members.append(("fadeSeconds", .number(Double(fadeSeconds)))) }
            return .object(members)
        case .rejected(let r):
            return .object([
                ("id", r.id.map { .string($0) } ?? .null), ("ok", .bool(false)),
                ("error", .object([("code", .string(r.code.rawValue)), ("message", .string(r.message))])),
            ])
        }
    }

    static func event(_ e: InputEventPayload) -> JSONValue {
        switch e {
        case let .button(name, gesture):
            return .object([("source", .string("button")), ("name", .string(name)), ("gesture", .string(gesture))])
        case .knob(let delta):
            return .object([("source", .string("knob")), ("delta", .number(Double(delta)))])
        }
    }

    static func allFinite(_ v: JSONValue) -> Bool {
        switch v {
        case .number(let n): return n.isFinite
        case .array(let items): return items.allSatisfy(allFinite)
        case .object(let members): return members.allSatisfy { allFinite($0.value) }
        default: return true
        }
    }

    static func serialized(_ v: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        write(v, into: &out)
        return out
    }

    static func write(_ v: JSONValue, into out: inout [UInt8]) {
        switch v {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .number(let n): out.append(contentsOf: format(n).utf8)
        case .string(let s): writeString(s, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                write(item, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, member) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                writeString(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                write(member.value, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    static func format(_ n: Double) -> String {
        guard n.isFinite else { return "null" }
        if n == n.rounded() && abs(n) < 9_007_199_254_740_992 { return String(Int64(n)) }
        return String(n)
    }

    static func writeString(_ s: String, into out: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        out.append(UInt8(ascii: "\""))
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [92, 34])
            case UInt8(ascii: "\\"): out.append(contentsOf: [92, 92])
            case 0x0A: out.append(contentsOf: [92, UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [92, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [92, UInt8(ascii: "t")])
            case 0..<0x20: out.append(contentsOf: [92, UInt8(ascii: "u"), 48, 48, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
