// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
import SpeakerHost
import SpeakerSystem
import Ambience
import SoundFiles

/// `render SOUND|MIX --seconds N --output PATH [--level L] [--config FILE]`:
/// renders any catalog sound (built-in or file from `audio.soundsDirectory`)
/// or mix (config `mixes`, or those saved over MQTT in `stateDirectory`)
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
        let mixes = SavedMixes.inForce(configMixes: config.mixes,
                                       saved: MixStore(directory: config.stateDirectory, logger: logger).load())
        let mix = mixes.first { $0.id == sound }
        let entry = catalog.sound(id: sound)
        guard entry != nil || mix != nil else {
            let known = (catalog.sounds.map(\.id) + mixes.map(\.id)).joined(separator: ", ")
            StandardError.write("render: unknown sound \"\(sound)\"; known sounds and mixes: \(known)\n")
            return 1
        }
        let isWAV = output.lowercased().hasSuffix(".wav")
        guard isWAV || output.lowercased().hasSuffix(".raw") else {
            StandardError.write("--output: expected a path ending in .wav or .raw, got \"\(output)\"\n")
            return 1
        }
        let frames = Int((seconds * Double(Self.sampleRate)).rounded())
        do {
            let source: SoundSource
            if let entry {
                source = try SoundCatalog.makeSource(entry, sampleRate: Self.sampleRate, streamer: nil)
            } else if let mix {
                let made = catalog.makeMixSource(mix, sampleRate: Self.sampleRate, rampFrames: Self.sampleRate / 10, streamer: nil)
                for (id, reason) in made.dropped { logger.warning("mix \"\(mix.id)\": layer \"\(id)\" dropped (\(reason))") }
                guard let mixSource = made.source else {
                    StandardError.write("render: mix \"\(mix.id)\" has no layer that can be played\n")
                    return 2
                }
                source = mixSource
            } else {
                return 1
            }
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
        logger.info("rendered \(seconds) s of \(entry?.name ?? mix?.name ?? sound) at level \(level) to \(output)")
        return 0
    }
}
