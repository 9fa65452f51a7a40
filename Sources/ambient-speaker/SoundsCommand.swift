// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
import SpeakerHost
import SpeakerSystem
import Ambience
import SoundFiles

/// `sounds [--config FILE]`: lists the catalog in playback order (built-ins,
/// then files from `audio.soundsDirectory`, then the mixes in force: config
/// `mixes` or those saved over MQTT), then every skipped file with its
/// reason. Main thread.
enum SoundsCommand {
    static func run(configPath: String?, logger: Logger) -> Int32 {
        let config: SpeakerConfig
        switch ConfigLoader(logger: logger).load(path: configPath ?? CommandLineTool.defaultConfigPath, required: configPath != nil) {
        case .success(let c): config = c
        case .failure(let error):
            StandardError.write("\(configPath ?? CommandLineTool.defaultConfigPath): \(error)\n")
            return 1
        }
        let catalog = SoundCatalog.load(directory: config.audio.soundsDirectory)
        for sound in catalog.sounds {
            switch sound.origin {
            case .builtIn: print("\(sound.id)\tbuilt-in\t\(sound.name) — \(sound.summary)")
            case .file(let path, let details): print("\(sound.id)\tfile\t\(sound.name) — \(sound.summary)\t[\(path): \(details)]")
            }
        }
        let mixes = SavedMixes.inForce(configMixes: config.mixes,
                                       saved: MixStore(directory: config.stateDirectory, logger: logger).load())
        for mix in mixes {
            let layers = mix.layers.map { "\($0.soundID) \($0.level)" }.joined(separator: ", ")
            let missing = mix.layers.filter { catalog.sound(id: $0.soundID) == nil }.map(\.soundID)
            print("\(mix.id)\tmix\t\(mix.name) — \(mix.catalogSummary)\t[\(layers)]"
                  + (missing.isEmpty ? "" : "\t(left out: no sound \(missing.joined(separator: ", ")))"))
        }
        if let problem = catalog.directoryProblem { print("(no file sounds: \(problem))") }
        for skipped in catalog.skipped { print("skipped\t\(skipped.path)\t\(skipped.reason)") }
        for note in catalog.notes { print("note\t\(note)") }
        return 0
    }
}
