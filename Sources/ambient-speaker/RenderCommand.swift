import SpeakerSystem
import Ambience

/// `render SOUND --seconds N --output PATH [--level L]`: renders a sound
/// offline through the same renderer the player uses (gain from the same
/// volume curve), to `.wav` or `.raw` (S16_LE, 48 kHz, stereo).
struct RenderCommand {
    static let sampleRate = 48_000
    let sound: String
    let seconds: Double
    let output: String
    let level: Double
    let logger: Logger

    func run() -> Int32 {
        guard let builtIn = BuiltInSounds.sound(id: sound) else {
            let known = BuiltInSounds.all.map(\.id).joined(separator: ", ")
            FileHandleStderr.write("render: unknown sound \"\(sound)\"; known sounds: \(known)\n")
            return 1
        }
        let isWAV = output.lowercased().hasSuffix(".wav")
        guard isWAV || output.lowercased().hasSuffix(".raw") else {
            FileHandleStderr.write("--output: expected a path ending in .wav or .raw, got \"\(output)\"\n")
            return 1
        }
        let frames = Int((seconds * Double(Self.sampleRate)).rounded())
        do {
            let file = try OutputFile(path: output)
            if isWAV {
                let header = WAVFormat.header(sampleRate: Self.sampleRate, channels: 2, frames: frames)
                try file.write(bytes: header)
            }
            try OfflineRender.render(source: builtIn.makeSource(sampleRate: Self.sampleRate), sampleRate: Self.sampleRate,
                                     frames: frames, gain: VolumeCurve.gain(level: level)) { chunk in
                try file.write(UnsafeRawBufferPointer(chunk)) as Void
            }
            try file.close()
        } catch {
            FileHandleStderr.write("render: \(error)\n")
            return 2
        }
        logger.info("rendered \(seconds) s of \(builtIn.name) at level \(level) to \(output)")
        return 0
    }
}
