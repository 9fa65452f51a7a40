// SPDX-License-Identifier: Apache-2.0
import Testing
import CSndfile
import Ambience
@testable import SoundFiles
#if canImport(Glibc)
import Glibc
#endif

@Suite struct CatalogTests {
    @Test func builtInsThenReadableFilesSortedWithSkippedReasons() throws {
        let f = SoundFixture(name: "catalog")
        let wav = Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_16)
        f.write("Ocean Surf.wav", format: wav, rate: 48_000, channels: 2, frames: 48_000) { noise($0, $1) }
        f.writeBytes("Ocean Surf.json", Array(#"{"name": "Surf at night", "summary": "Waves on a pebble beach"}"#.utf8))
        f.write("brook.flac", format: Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_16), rate: 44_100, channels: 1, frames: 44_100,
                title: "Mountain brook") { i, _ in noise(i, 0) }
        f.write("wind.ogg", format: Int32(SF_FORMAT_OGG | SF_FORMAT_VORBIS), rate: 22_050, channels: 2, frames: 22_050) { noise($0, $1) }
        f.write("fan.opus", format: Int32(SF_FORMAT_OGG | SF_FORMAT_OPUS), rate: 48_000, channels: 1, frames: 48_000) { i, _ in noise(i, 0) }
        f.writeBytes("empty.wav", [])
        f.writeBytes("corrupt.flac", Array("fLaC".utf8) + (0..<4000).map { UInt8(truncatingIfNeeded: $0 &* 37) })
        f.writeBytes("notes.txt", Array("hello".utf8))
        f.write("surround.wav", format: wav, rate: 48_000, channels: 6, frames: 4800) { noise($0, $1) }
        f.write("ocean_surf.wav", format: wav, rate: 48_000, channels: 2, frames: 4800) { noise($0, $1) }
        f.write(".hidden.wav", format: wav, rate: 48_000, channels: 2, frames: 4800) { noise($0, $1) }
        // A WAV whose data was cut off: the header promises more frames than there are.
        let full = f.write("cut.wav", format: wav, rate: 48_000, channels: 2, frames: 96_000) { noise($0, $1) }
        truncate(full, 44 + 4 * 30_000)

        let catalog = SoundCatalog.load(directory: f.directory)
        #expect(catalog.directoryProblem == nil)
        let ids = catalog.sounds.map(\.id)
        #expect(Array(ids.prefix(BuiltInSounds.all.count)) == BuiltInSounds.all.map(\.id))
        // File sounds sorted by file name: "Ocean Surf.wav" < "brook.flac" < "fan.opus" < "wind.ogg" (byte order).
        #expect(Array(ids.dropFirst(BuiltInSounds.all.count)).filter { $0 != "cut" } == ["ocean-surf", "brook", "fan", "wind"])
        let surf = try #require(catalog.sound(id: "ocean-surf"))
        #expect(surf.name == "Surf at night")
        #expect(surf.summary == "Waves on a pebble beach")
        #expect(catalog.sound(id: "brook")?.name == "Mountain brook")
        #expect(catalog.sound(id: "wind")?.summary.contains("22050 Hz, stereo") == true)

        let reasons = Dictionary(uniqueKeysWithValues: catalog.skipped.map { (String($0.path.split(separator: "/").last!), $0.reason) })
        #expect(reasons["empty.wav"]?.contains("libsndfile cannot read it") == true, "\(reasons)")
        #expect(reasons["corrupt.flac"] != nil, "\(reasons)")
        #expect(reasons["notes.txt"]?.contains("libsndfile cannot read it") == true)
        #expect(reasons["surround.wav"]?.contains("6 channels") == true)
        #expect(reasons["ocean_surf.wav"]?.contains("already taken") == true)
        #expect(reasons[".hidden.wav"] == nil && reasons["Ocean Surf.json"] == nil)
        // libsndfile shortens a truncated WAV to the frames present, so it plays what is there.
        if let cut = catalog.sound(id: "cut") { #expect(cut.summary.contains("48000 Hz")) } else { #expect(reasons["cut.wav"] != nil) }
        #expect(!catalog.sounds.contains { ["empty", "corrupt", "notes", "surround"].contains($0.id) })
    }

    @Test func missingDirectoryGivesBuiltInsAndSaysWhy() {
        let catalog = SoundCatalog.load(directory: "/tmp/no-such-dir-\(getpid())")
        #expect(catalog.sounds.map(\.id) == BuiltInSounds.all.map(\.id))
        #expect(catalog.directoryProblem?.contains("No such file") == true)
    }

    @Test func brokenSidecarIsNotedAndIgnored() {
        let f = SoundFixture(name: "sidecar")
        f.write("hum.wav", format: Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_16), rate: 48_000, channels: 1, frames: 4800) { i, _ in noise(i, 0) }
        f.writeBytes("hum.json", Array("{name: nope".utf8))
        let catalog = SoundCatalog.load(directory: f.directory)
        #expect(catalog.sound(id: "hum")?.name == "hum")
        #expect(catalog.notes.count == 1 && catalog.notes[0].contains("hum.json"))
    }

    @Test func idsFromFileNames() {
        #expect(SoundDirectory.id(fromFileName: "Ocean Surf.flac") == "ocean-surf")
        #expect(SoundDirectory.id(fromFileName: "  rain__on--tin.roof.wav") == "rain-on-tin-roof")
        #expect(SoundDirectory.id(fromFileName: "Ünïcode.ogg") == "n-code")
        #expect(SoundDirectory.id(fromFileName: "___.wav") == "")
    }
}
