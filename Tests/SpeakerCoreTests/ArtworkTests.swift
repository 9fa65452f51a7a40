// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import SpeakerCore
import SpeakerProtocol

/// Artwork: the images the repository ships, what `ArtworkImage.validate`
/// takes and refuses, and how the core publishes the images and says in
/// the catalog which entries have one.
@Suite struct ArtworkTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static func shipped(_ id: String) -> [UInt8] {
        let url = repository.appendingPathComponent("artwork/\(id).png")
        return (try? Data(contentsOf: url)).map { [UInt8]($0) } ?? []
    }

    /// A valid baseline JPEG's structure: SOI, a frame header, a scan header, scan data, EOI.
    static let jpeg: [UInt8] = [0xFF, 0xD8,
                                0xFF, 0xC0, 0x00, 0x0B, 0x08, 0x00, 0x01, 0x00, 0x01, 0x01, 0x01, 0x11, 0x00,
                                0xFF, 0xDA, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3F, 0x00,
                                0x12, 0x34, 0x56, 0xFF, 0xD9]

    func item(_ value: JSONValue?, _ index: Int) -> JSONValue? {
        guard case .array(let items)? = value, items.indices.contains(index) else { return nil }
        return items[index]
    }

    func refusal(_ bytes: [UInt8]) -> String? {
        if case .failure(let refusal) = ArtworkImage.validate(bytes) { return refusal.reason }
        return nil
    }

    @Test(arguments: ["white", "pink", "brown", "rain", "surf"])
    func everyBuiltInSoundShipsAValidPNGOfAtMost64KiB(id: String) {
        let bytes = Self.shipped(id)
        #expect(!bytes.isEmpty, "artwork/\(id).png is missing")
        #expect(bytes.count <= ArtworkImage.maxBytes)
        #expect((try? ArtworkImage.validate(bytes).get())?.format == .png)
    }

    @Test func aJPEGIsTakenAndATruncatedOneIsRefused() {
        #expect((try? ArtworkImage.validate(Self.jpeg).get())?.format == .jpeg)
        #expect(refusal(Array(Self.jpeg.dropLast(2))) == "corrupt JPEG: truncated (no end-of-image marker)")
        #expect(refusal(Array(Self.jpeg.prefix(10)))?.hasPrefix("corrupt JPEG: segment at byte 2 runs past") == true)
    }

    @Test func wrongTypeOversizeTruncationAndDamageAreRefusedWithTheReason() {
        let png = Self.shipped("rain")
        #expect(refusal(Array("GIF89a....".utf8)) == "not a PNG or JPEG (starts with 47 49 46 38 39 61 2e 2e)")
        #expect(refusal([]) == "empty file")
        let big = ArtworkImage.pngSignature + [UInt8](repeating: 0, count: ArtworkImage.maxBytes - 7)
        #expect(refusal(big) == "65537 bytes, over the 65536-byte limit")
        #expect(refusal(Array(png.dropLast(12))) == "corrupt PNG: truncated at byte \(png.count - 12) (no IEND chunk)")
        var damaged = png
        damaged[50] ^= 0x01
        #expect(refusal(damaged)?.hasPrefix("corrupt PNG: chunk IDAT at byte 33: bad CRC") == true)
        #expect(refusal(png + [0]) == "corrupt PNG: 1 bytes after IEND")
    }

    @Test func noMutationOfAnImageCrashesTheCheck() {
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> Int {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Int(truncatingIfNeeded: seed >> 33)
        }
        var refused = 0
        for base in [Self.shipped("surf"), Self.jpeg] {
            for _ in 0..<2_000 {
                var bytes = base
                switch next() % 3 {
                case 0: bytes[next() % bytes.count] = UInt8(truncatingIfNeeded: next())
                case 1: bytes = Array(bytes.prefix(next() % bytes.count))
                default: bytes.insert(UInt8(truncatingIfNeeded: next()), at: next() % bytes.count)
                }
                if refusal(bytes) != nil { refused += 1 }
            }
        }
        #expect(refused > 3_000, "most mutations are caught (\(refused) of 4000)")
    }

    static let files = [
        ArtworkFile(soundID: "white", path: "/art/white.png", contents: .bytes(shipped("white"))),
        ArtworkFile(soundID: "pink", path: "/art/pink.png", contents: .bytes(Array("GIF89a....".utf8))),
        ArtworkFile(soundID: "pink", path: "/art/pink.jpg", contents: .unreadable("permission denied")),
        ArtworkFile(soundID: "gone", path: "/art/gone.png", contents: .bytes(jpeg)),
    ]

    @Test func imagesArePublishedRetainedAheadOfTheCatalogWhichSaysWhoHasOne() {
        var h = Harness(artwork: Self.files)
        let fx = h.send(.start(at: h.now))
        let art = fx.publications.filter { $0.topic.contains("/artwork/") }
        #expect(art.map(\.topic) == ["ambient-speaker/kitchen/artwork/white"])
        #expect(art.first?.payload == Self.shipped("white") && art.first?.retain == true && art.first?.qos == 1)
        let order = fx.topics
        #expect(order.firstIndex(of: "ambient-speaker/kitchen/artwork/white")! < order.firstIndex(of: "ambient-speaker/kitchen/catalog")!)
        let catalog = fx.lastPublished("catalog")
        #expect(item(catalog, 0)?["artwork"] == .bool(true))
        #expect(item(catalog, 1)?["artwork"] == nil)
        #expect(item(catalog, 1)?["artworkProblem"] == .string("pink.png: not a PNG or JPEG (starts with 47 49 46 38 39 61 2e 2e)"))
        #expect(item(catalog, 2)?.jsonText == #"{"id":"brown","name":"Brown noise","summary":"deep","kind":"sound"}"#)
        #expect(fx.warnings.contains("artwork /art/pink.png refused: not a PNG or JPEG (starts with 47 49 46 38 39 61 2e 2e)"))
        #expect(fx.warnings.contains("artwork /art/pink.jpg refused: cannot be read: permission denied"))
        #expect(fx.logs.contains { $0.1 == #"artwork /art/gone.png: no sound "gone" in the catalog; ignored"# })
        let decoded = try? [CatalogEntry](json: catalog ?? .null)
        #expect(decoded?.map { $0.artwork } == [true, false, false])
        #expect(decoded?[1].artworkProblem?.hasPrefix("pink.png: not a PNG") == true)
    }

    @Test func aMixShowsItsFirstLayersImageAndADeletedMixClearsIts() {
        var h = Harness(artwork: Self.files)
        h.send(.start(at: h.now))
        let saved = h.command(#"{"id":"s","action":"saveMix","mixID":"calm","name":"Calm","layers":[{"soundID":"pink","level":0.5},{"soundID":"white","level":0.2}]}"#)
        let art = saved.publications.filter { $0.topic.hasSuffix("/artwork/calm") }
        #expect(art.map(\.payload) == [Self.shipped("white")], "only the new entry's image goes out")
        #expect(!saved.topics.contains("ambient-speaker/kitchen/artwork/white"))
        #expect(item(saved.lastPublished("catalog"), 3)?["artwork"] == .bool(true))
        let deleted = h.command(#"{"id":"d","action":"deleteMix","mixID":"calm"}"#)
        let cleared = deleted.publications.filter { $0.topic.hasSuffix("/artwork/calm") }
        #expect(cleared.count == 1 && cleared.first?.payload == [] && cleared.first?.retain == true)
    }

    @Test func everyConnectRepublishesTheImagesBeforeTheCatalog() {
        var h = Harness(artwork: Self.files)
        h.send(.start(at: h.now))
        let fx = h.send(.mqttConnected(at: h.now))
        let topics = fx.topics
        let image = topics.firstIndex(of: "ambient-speaker/kitchen/artwork/white")
        #expect(image != nil)
        #expect(image! < topics.firstIndex(of: "ambient-speaker/kitchen/catalog")!)
    }

    @Test func withoutArtworkTheCatalogIsUnchanged() {
        var h = Harness()
        let fx = h.send(.start(at: h.now))
        #expect(!fx.topics.contains { $0.contains("/artwork/") })
        #expect(fx.lastPublished("catalog")?.jsonText.contains("artwork") == false)
    }
}
