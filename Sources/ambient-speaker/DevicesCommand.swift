import SpeakerSystem
import AudioALSA

/// `devices`: lists ALSA playback devices and GPIO chips with their named lines (`+GPIO`).
enum DevicesCommand {
    static func run(logger: Logger) -> Int32 {
        print("ALSA playback devices:")
        let devices = AudioDevices.playbackDevices()
        if devices.isEmpty { print("  (none)") }
        for d in devices { print("  \(d.name)\t\(d.description)") }
        printGPIO()
        return 0
    }
}
