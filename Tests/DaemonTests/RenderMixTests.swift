// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport

/// `ambient-speaker render MIXID` renders a mix of the config the way it
/// renders a sound: the built binary, a config with two mixes, WAV files read
/// back. A mix with one more layer carries more energy than the same mix
/// without it, the render is reproducible, and an unknown id is refused
/// naming the mixes there are.
@Suite(.serialized) struct RenderMixTests {
    static let config = """
        {"device":{"id":"render"},"board":{"kind":"simulated"},"mqtt":{"host":"127.0.0.1"},
         "mixes":[{"id":"night","name":"Night","layers":[{"soundID":"pink","level":0.6},{"soundID":"brown","level":0.5}]},
                  {"id":"pinkonly","name":"Pink only","layers":[{"soundID":"pink","level":0.6}]}]}
        """

    @Test func aMixOfTheConfigRendersWithEveryLayerAndAnUnknownIDIsRefused() throws {
        let dir = try Files.makeTemporaryDirectory("/tmp/speaker-render-XXXXXX")
        defer { _ = Files.list(dir).map { unlink(dir + "/" + $0) }; rmdir(dir) }
        let configPath = dir + "/config.json"
        try Files.writeText(configPath, Self.config)
        let night = try render("night", dir: dir, configPath: configPath)
        let again = try render("night", dir: dir, configPath: configPath)
        let pinkOnly = try render("pinkonly", dir: dir, configPath: configPath)
        #expect(night.count == 2 * 48_000 * 2, "2 s of 48 kHz stereo, got \(night.count) samples")
        #expect(night == again, "the same mix renders the same samples")
        #expect(pinkOnly.count == night.count)
        let nightRMS = rms(night), pinkRMS = rms(pinkOnly)
        #expect(pinkRMS > 0.003, "pink alone is heard: RMS \(pinkRMS)")
        #expect(nightRMS > pinkRMS * 1.05, "the brown layer adds energy: \(nightRMS) vs \(pinkRMS)")

        let log = dir + "/unknown.log"
        let child = try ChildProcess(executable: try SpeakerProcess.binaryPath(),
                                     arguments: ["render", "dawn", "--seconds", "1", "--output", dir + "/dawn.wav", "--config", configPath],
                                     logPath: log)
        #expect(child.waitForExit(timeout: 60) == 1)
        let said = try Files.readText(log)
        #expect(said.contains("unknown sound \"dawn\"") && said.contains("night") && said.contains("pinkonly"), "\(said)")
    }

    /// Runs `render ID --seconds 2` into a WAV and returns its 16-bit samples.
    private func render(_ id: String, dir: String, configPath: String) throws -> [Int16] {
        let output = "\(dir)/\(id)-\(Files.list(dir).count).wav"
        let child = try ChildProcess(executable: try SpeakerProcess.binaryPath(),
                                     arguments: ["render", id, "--seconds", "2", "--output", output, "--config", configPath],
                                     logPath: dir + "/render.log")
        let code = child.waitForExit(timeout: 120)
        try #require(code == 0, "render \(id) exited \(String(describing: code)): \((try? Files.readText(dir + "/render.log")) ?? "")")
        let bytes = try Files.read(output)
        guard let at = dataChunk(bytes) else { throw DaemonTestError("render \(id)", "no data chunk in \(bytes.count) bytes") }
        return stride(from: at, to: bytes.count - 1, by: 2).map { Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8) }
    }

    /// The offset of the first sample after the `data` chunk's header.
    private func dataChunk(_ bytes: [UInt8]) -> Int? {
        var at = 12
        while at + 8 <= bytes.count {
            let size = Int(bytes[at + 4]) | Int(bytes[at + 5]) << 8 | Int(bytes[at + 6]) << 16 | Int(bytes[at + 7]) << 24
            if bytes[at..<at + 4].elementsEqual("data".utf8) { return at + 8 }
            at += 8 + size + size % 2
        }
        return nil
    }

    private func rms(_ samples: [Int16]) -> Double {
        let sum = samples.reduce(0.0) { $0 + Double($1) * Double($1) }
        return (sum / Double(max(samples.count, 1))).squareRoot() / 32768
    }
}
