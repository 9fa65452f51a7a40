import SpeakerSystem
import Ambience

/// `sounds`: lists the catalog in playback order.
enum SoundsCommand {
    static func run(configPath: String?, logger: Logger) -> Int32 {
        if let configPath, case .failure(let error) = ConfigLoader(logger: logger).load(path: configPath, required: true) {
            FileHandleStderr.write("\(configPath): \(error)\n")
            return 1
        }
        for sound in BuiltInSounds.all {
            print("\(sound.id)\tbuilt-in\t\(sound.name) — \(sound.summary)")
        }
        return 0
    }
}
