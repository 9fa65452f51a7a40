// SPDX-License-Identifier: Apache-2.0
import SpeakerSystem
import AudioALSA

/// `devices`: lists ALSA playback devices and GPIO chips with their named lines (`+GPIO`).
enum DevicesCommand {
    static func run(logger: Logger) -> Int32 {
        print("ALSA playback devices:")
        let devices = AudioDevices.playbackDevices()
        if devices.isEmpty { print("  (none)") }
        for d in devices { print("  \(d.name)\t\(d.description)") }
        print("ALSA mixer elements with a playback volume (card \"default\"; for volume.mixer):")
        let elements = ALSAMixer.playbackElements(card: "default")
        if elements.isEmpty { print("  (none)") }
        for e in elements { print("  \(e.name)\t\(e.minDB)…\(e.maxDB) dB") }
        printGPIO()
        return 0
    }
}
