import SpeakerSystem
import AudioALSA

/// `devices`: lists ALSA playback devices (GPIO chips come with the libgpiod board).
enum DevicesCommand {
    static func run(logger: Logger) -> Int32 {
        print("ALSA playback devices:")
        let devices = AudioDevices.playbackDevices()
        if devices.isEmpty { print("  (none)") }
        for d in devices { print("  \(d.name)\t\(d.description)") }
        return 0
    }
}
