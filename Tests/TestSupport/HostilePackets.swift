// SPDX-License-Identifier: Apache-2.0
import SeededRandom

/// A seeded generator of broker-to-client bytes that a broken or hostile
/// broker might send: every MQTT packet type with plausible and implausible
/// bodies, bad remaining lengths, overlong varints, unknown, duplicated and
/// mis-sized v5 properties, truncation, bit flips and plain random bytes —
/// sometimes after a valid CONNACK, so packets that are only allowed on an
/// accepted connection are reached too. The same seed gives the same packets.
/// Each packet comes with a `shape`: the type, flags class, mutation, property
/// ids and length class, so a run can count how many distinct shapes it sent.
/// Pure value; one thread.
public struct HostilePackets {
    /// One hostile reply: the bytes to send after the client's CONNECT.
    public struct Packet: Sendable {
        public var bytes: [UInt8]
        public var shape: String

        public init(bytes: [UInt8], shape: String) {
            self.bytes = bytes
            self.shape = shape
        }
    }

    private var random: SplitMix64

    /// A generator for `seed`.
    public init(seed: UInt64) { random = SplitMix64(seed: seed) }

    /// The known case that aborted libmosquitto 2.0.11: a v5
    /// CONNACK whose properties hold the unknown identifier 0x00.
    public static let invalidPropertyConnack: [UInt8] = [0x20, 0x04, 0x00, 0x00, 0x01, 0x00]
    /// A valid v5 CONNACK: session not present, success, no properties.
    public static let validConnack: [UInt8] = [0x20, 0x03, 0x00, 0x00, 0x00]

    private mutating func nextWord() -> UInt64 { random.next() }

    private mutating func below(_ n: Int) -> Int { Int(nextWord() % UInt64(max(1, n))) }
    private mutating func byte() -> UInt8 { UInt8(truncatingIfNeeded: nextWord()) }
    private mutating func bytes(_ n: Int) -> [UInt8] { (0..<n).map { _ in byte() } }
    private mutating func chance(_ percent: Int) -> Bool { below(100) < percent }

    /// MQTT variable byte integer.
    static func varint(_ value: Int) -> [UInt8] {
        var v = value
        var out: [UInt8] = []
        repeat {
            var b = UInt8(v % 128)
            v /= 128
            if v > 0 { b |= 0x80 }
            out.append(b)
        } while v > 0
        return out
    }

    /// Property identifiers with the value kind MQTT v5 gives them (1 byte,
    /// 2, 4, varint, UTF-8 string, binary, string pair), plus unknown ones.
    private static let propertyKinds: [UInt8: Int] = [
        0x01: 1, 0x02: 4, 0x03: 5, 0x08: 5, 0x09: 6, 0x0B: 3, 0x11: 4, 0x12: 5, 0x13: 2, 0x15: 5, 0x16: 6,
        0x17: 1, 0x18: 4, 0x19: 1, 0x1A: 5, 0x1C: 5, 0x1F: 5, 0x21: 2, 0x22: 2, 0x23: 2, 0x24: 1, 0x25: 1,
        0x26: 7, 0x27: 4, 0x28: 1, 0x29: 1, 0x2A: 1,
    ]

    /// A property list (without its length prefix) and the ids it used.
    private mutating func properties() -> (bytes: [UInt8], ids: [UInt8]) {
        var out: [UInt8] = []
        var ids: [UInt8] = []
        for _ in 0..<below(4) {
            let id: UInt8 = chance(75) ? Array(Self.propertyKinds.keys).sorted()[below(Self.propertyKinds.count)] : byte()
            ids.append(id)
            out += Self.varint(Int(id))
            let kind = Self.propertyKinds[id] ?? (1 + below(7))
            let lie = chance(15)
            switch kind {
            case 1: out.append(chance(80) ? UInt8(below(2)) : byte())
            case 2: out += bytes(2)
            case 4: out += bytes(4)
            case 3: out += chance(80) ? Self.varint(below(300_000_000)) : [0xFF, 0xFF, 0xFF, 0xFF, 0x7F]
            case 5, 6:
                let body = kind == 5 && chance(70) ? Array("a/b\u{0}é".utf8.prefix(below(6))) : bytes(below(12))
                let stated = lie ? below(70_000) : body.count
                out += [UInt8(stated >> 8 & 0xFF), UInt8(stated & 0xFF)] + body
            default:
                for _ in 0..<2 {
                    let body = bytes(below(6))
                    let stated = lie ? below(70_000) : body.count
                    out += [UInt8(stated >> 8 & 0xFF), UInt8(stated & 0xFF)] + body
                }
            }
        }
        if chance(10), let first = ids.first { out += Self.varint(Int(first)) + [0, 0, 0, 0]; ids.append(first) }
        return (out, ids)
    }

    /// A property list with its length prefix, which may lie.
    private mutating func propertySection() -> (bytes: [UInt8], ids: [UInt8], lied: Bool) {
        let (props, ids) = properties()
        let lie = chance(15)
        let stated = lie ? (chance(50) ? props.count + 1 + below(1000) : max(0, props.count - 1 - below(3))) : props.count
        return (Self.varint(stated) + props, ids, lie)
    }

    /// The next hostile reply.
    public mutating func next() -> Packet {
        let types: [(UInt8, String)] = [(0x20, "CONNACK"), (0x30, "PUBLISH"), (0x40, "PUBACK"), (0x50, "PUBREC"),
                                         (0x62, "PUBREL"), (0x70, "PUBCOMP"), (0x90, "SUBACK"), (0xB0, "UNSUBACK"),
                                         (0xD0, "PINGRESP"), (0xE0, "DISCONNECT"), (0xF0, "AUTH"), (0x00, "RESERVED"),
                                         (0x10, "CONNECT"), (0x82, "SUBSCRIBE"), (0xC0, "PINGREQ")]
        let (baseHeader, name) = types[below(types.count)]
        var header = baseHeader
        var flagsClass = "std"
        if name == "PUBLISH" {
            header |= UInt8(below(16))  // dup, qos (incl. the invalid 3), retain
            flagsClass = "q\((header >> 1) & 3)"
        } else if chance(15) {
            header = (header & 0xF0) | UInt8(below(16))
            flagsClass = "badflags"
        }
        var body: [UInt8] = []
        var propertyIDs: [UInt8] = []
        var propertyLie = false
        let withProperties = chance(85)
        func addProperties(_ g: inout HostilePackets) {
            guard withProperties else { return }
            let p = g.propertySection()
            body += p.bytes
            propertyIDs = p.ids
            propertyLie = p.lied
        }
        switch name {
        case "CONNACK":
            body = [chance(80) ? UInt8(below(2)) : byte(), chance(70) ? 0 : byte()]
            addProperties(&self)
        case "PUBLISH":
            let topic = chance(70) ? Array("ambient-speaker/test/command".utf8) : bytes(below(20))
            let stated = chance(15) ? below(70_000) : topic.count
            body = [UInt8(stated >> 8 & 0xFF), UInt8(stated & 0xFF)] + topic
            if (header >> 1) & 3 != 0 { body += bytes(2) }
            addProperties(&self)
            body += chance(50) ? Array(#"{"id":"x","action":"play"}"#.utf8) : bytes(below(40))
        case "PUBACK", "PUBREC", "PUBREL", "PUBCOMP", "DISCONNECT", "AUTH":
            if name != "DISCONNECT" && name != "AUTH" { body = bytes(2) }
            if chance(80) { body.append(chance(50) ? 0 : byte()) }
            addProperties(&self)
        case "SUBACK", "UNSUBACK":
            body = bytes(2)
            addProperties(&self)
            body += bytes(below(4))
        default:
            body = bytes(below(8))
        }

        // How the packet is then broken.
        let mutations = ["none", "truncate", "length-long", "length-short", "varint-overlong", "flip", "random", "huge-length"]
        let mutation = chance(20) ? "none" : mutations[1 + below(mutations.count - 1)]
        var packet: [UInt8]
        switch mutation {
        case "length-long":
            packet = [header] + Self.varint(body.count + 1 + below(200)) + body
        case "length-short":
            packet = [header] + Self.varint(max(0, body.count - 1 - below(4))) + body
        case "varint-overlong":
            packet = [header, 0xFF, 0xFF, 0xFF, 0xFF] + bytes(below(3)) + body
        case "huge-length":
            packet = [header] + Self.varint(100_000_000 + below(168_000_000)) + body
        case "random":
            packet = bytes(1 + below(64))
        default:
            packet = [header] + Self.varint(body.count) + body
        }
        if mutation == "truncate" && packet.count > 1 { packet = Array(packet.prefix(1 + below(packet.count - 1))) }
        if mutation == "flip" && !packet.isEmpty {
            for _ in 0..<(1 + below(3)) { packet[below(packet.count)] ^= UInt8(1 << below(8)) }
        }
        let afterConnack = name != "CONNACK" && chance(70)
        if afterConnack { packet = Self.validConnack + packet }
        let lengthClass = packet.count < 8 ? "tiny" : packet.count < 32 ? "small" : "large"
        let ids = propertyIDs.map { String($0, radix: 16) }.joined(separator: ",")
        let shape = "\(afterConnack ? "ok+" : "")\(name)/\(flagsClass)/\(mutation)/p[\(ids)]\(propertyLie ? "lie" : "")/\(lengthClass)"
        return Packet(bytes: packet, shape: shape)
    }
}
