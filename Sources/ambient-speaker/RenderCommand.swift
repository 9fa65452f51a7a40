// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
import SpeakerHost
import SpeakerSystem
import Ambience
import SoundFiles

/// `render SOUND --seconds N --output PATH [--level L] [--config FILE]`:
/// renders any catalog sound (built-in or file from `audio.soundsDirectory`)
/// offline through the same renderer the player uses: the same source (a
/// file is looped and resampled by the same decoder), the same volume curve
/// and S16 conversion, starting at full fade. To `.wav` or `.raw` (S16_LE,
/// 48 kHz, stereo). Main thread.
struct RenderCommand {
    static let sampleRate = 48_000
    let sound: String
    let seconds: Double
    let output: String
    let level: Double
    var configPath: String? = nil
    let logger: Logger

    func run() -> Int32 {
        let config: SpeakerConfig
        switch ConfigLoader(logger: logger).load(path: configPath ?? CommandLineTool.defaultConfigPath, required: configPath != nil) {
        case .success(let c): config = c
        case .failure(let error):
            StandardError.write("configuration: \(error)\n")
            return 1
        }
        let catalog = SoundCatalog.load(directory: config.audio.soundsDirectory)
        guard let entry = catalog.sound(id: sound) else {
            let known = catalog.sounds.map(\.id).joined(separator: ", ")
            StandardError.write("render: unknown sound \"\(sound)\"; known sounds: \(known)\n")
            return 1
        }
        let isWAV = output.lowercased().hasSuffix(".wav")
        guard isWAV || output.lowercased().hasSuffix(".raw") else {
            StandardError.write("--output: expected a path ending in .wav or .raw, got \"\(output)\"\n")
            return 1
        }
        let frames = Int((seconds * Double(Self.sampleRate)).rounded())
        do {
            let source = try SoundCatalog.makeSource(entry, sampleRate: Self.sampleRate, streamer: nil)
            let file = try OutputFile(path: output)
            if isWAV {
                let header = WAVFormat.header(sampleRate: Self.sampleRate, channels: 2, frames: frames)
                try file.write(bytes: header)
            }
            try OfflineRender.render(source: source, sampleRate: Self.sampleRate,
                                     frames: frames, gain: VolumeCurve.gain(level: level)) { chunk in
                try file.write(UnsafeRawBufferPointer(chunk)) as Void
            }
            try file.close()
        } catch {
            StandardError.write("render: \(error)\n")
            return 2
        }
        logger.info("rendered \(seconds) s of \(entry.name) at level \(level) to \(output)")
        return 0
    }
}
