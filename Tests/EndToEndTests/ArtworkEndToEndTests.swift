// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport
import SpeakerProtocol
import SpeakerSystem

/// Artwork end to end (real binary, real mosquitto): the shipped images of
/// the built-in sounds and a file sound's sidecar image published retained
/// on `artwork/{id}`, a truncated PNG and an oversized JPEG refused with
/// their reasons in the catalog and the log, and a reader that subscribes
/// later gets every image from the broker's retained copy.
@Suite(.serialized) struct ArtworkEndToEndTests {
    static let repository: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/")
    }()

    /// Half a second of a 16-bit mono 440 Hz tone as WAV.
    static func wav() -> [UInt8] {
        let rate = 8000, frames = 4000
        // In steps: Swift 6.0's type checker gives up on the one expression.
        var out: [UInt8] = Array("RIFF".utf8)
        out += le32(36 + frames * 2)
        out += Array("WAVEfmt ".utf8)
        out += le32(16)
        out += [1, 0, 1, 0] as [UInt8]
        out += le32(rate)
        out += le32(rate * 2)
        out += [2, 0, 16, 0] as [UInt8]
        out += Array("data".utf8)
        out += le32(frames * 2)
        for i in 0..<frames {
            let sample = Int16(8000 * sin(Double(i) * 2 * Double.pi * 440 / Double(rate)))
            out += [UInt8(truncatingIfNeeded: sample), UInt8(truncatingIfNeeded: sample >> 8)]
        }
        return out
    }

    static func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }

    func json(_ m: ReceivedMessage?) -> JSONValue? { m.flatMap { try? JSONParser().parse($0.payload) } }

    func entry(_ catalog: JSONValue?, _ id: String) -> JSONValue? {
        guard case .array(let items)? = catalog else { return nil }
        return items.first { $0["id"] == .string(id) }
    }

    @Test func imagesArePublishedRetainedAndBadOnesRefusedWithTheirReasons() throws {
        let sounds = try TemporaryDirectory(prefix: "speaker-artwork")
        let surf = try FileIO.read(path: Self.repository + "/artwork/surf.png")
        let rain = try FileIO.read(path: Self.repository + "/artwork/rain.png")
        for name in ["tone", "hum", "big"] { try FileIO.writeAtomically(path: "\(sounds.path)/\(name).wav", bytes: Self.wav()) }
        try FileIO.writeAtomically(path: "\(sounds.path)/tone.png", bytes: surf)
        try FileIO.writeAtomically(path: "\(sounds.path)/hum.png", bytes: Array(rain.prefix(rain.count / 2)))
        try FileIO.writeAtomically(path: "\(sounds.path)/big.jpg", bytes: [0xFF, 0xD8, 0xFF] + [UInt8](repeating: 0, count: 69_997))

        let broker = try TestBroker()
        let peer = try TestPeer(port: broker.port)
        try peer.connect()
        try peer.subscribe("ambient-speaker/e2e/#")
        let root = "ambient-speaker/e2e"
        let speaker = try SpeakerProcess(brokerPort: broker.port, audioConfig: """
            "soundsDirectory":"\(sounds.path)","artworkDirectory":"\(Self.repository)/artwork"
            """)
        try #require(peer.waitForMessage(topic: "\(root)/availability", timeout: 60) { $0.payloadString == "online" } != nil, "\(speaker.log)")
        let catalog = json(peer.messages(on: "\(root)/catalog").last)
        for id in ["white", "pink", "brown", "rain", "surf", "tone"] {
            #expect(entry(catalog, id)?["artwork"] == .bool(true), "\(id): \(catalog?.jsonText ?? "no catalog")")
            let image = peer.messages(on: "\(root)/artwork/\(id)").last
            let expected = id == "tone" ? surf : try FileIO.read(path: "\(Self.repository)/artwork/\(id).png")
            #expect(image?.payload == expected, "\(id): the image's bytes as shipped")
        }
        #expect(entry(catalog, "hum")?["artwork"] == nil)
        #expect(entry(catalog, "hum")?["artworkProblem"]?.stringValue?.hasPrefix("hum.png: corrupt PNG: ") == true,
                "\(catalog?.jsonText ?? "")")
        #expect(entry(catalog, "big")?["artworkProblem"] == .string("big.jpg: 70000 bytes, over the 65536-byte limit"))
        #expect(peer.messages(on: "\(root)/artwork/hum").isEmpty && peer.messages(on: "\(root)/artwork/big").isEmpty)
        #expect(speaker.log.contains("artwork \(sounds.path)/hum.png refused: corrupt PNG"), "\(speaker.log)")
        #expect(speaker.log.contains("skipping") == false, "an image is no sound to skip: \(speaker.log)")
        #expect(try ContractEndToEndTests.validateAll(peer, root: root, deviceID: "e2e") > 3)

        // A reader that comes later gets the images from the broker.
        let later = try TestPeer(port: broker.port)
        try later.connect()
        try later.subscribe("\(root)/artwork/+")
        let retained = later.waitForMessage(topic: "\(root)/artwork/tone", timeout: 10)
        #expect(retained?.payload == surf && retained?.retain == true)
        #expect(later.waitForMessage(topic: "\(root)/artwork/rain", timeout: 10)?.payload == rain)
    }
}
