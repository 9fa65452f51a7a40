// SPDX-License-Identifier: Apache-2.0
import CALSA

/// ALSA device discovery, for `ambient-speaker devices` and the demo's
/// "is there a sound card?" check. Main thread.
public enum AudioDevices {
    /// One playback pcm name with ALSA's description.
    public struct Device: Sendable, Equatable {
        public var name: String
        public var description: String
    }

    /// Stops alsa-lib from printing its own diagnostics to stderr; the
    /// speaker reports failures itself (with `snd_strerror`). Call once at start.
    public static func silenceLibraryMessages() {
        calsa_silence_library_messages()
    }

    /// Playback pcms from `snd_device_name_hint` (what `aplay -L` lists).
    public static func playbackDevices() -> [Device] {
        var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        guard snd_device_name_hint(-1, "pcm", &hints) == 0, let hints else { return [] }
        defer { snd_device_name_free_hint(hints) }
        var devices: [Device] = []
        var i = 0
        while let hint = hints[i] {
            i += 1
            func field(_ id: String) -> String? {
                guard let value = snd_device_name_get_hint(hint, id) else { return nil }
                defer { free(value) }
                return String(cString: value)
            }
            if let io = field("IOID"), io != "Output" { continue }
            guard let name = field("NAME") else { continue }
            devices.append(Device(name: name, description: (field("DESC") ?? "").split(separator: "\n").joined(separator: " — ")))
        }
        return devices
    }

    /// Whether the pcm `device` can be opened for playback right now (opened and closed at once).
    public static func canOpen(device: String) -> Bool {
        var pcm: OpaquePointer?
        guard snd_pcm_open(&pcm, device, SND_PCM_STREAM_PLAYBACK, Int32(SND_PCM_NONBLOCK)) == 0 else { return false }
        snd_pcm_close(pcm)
        return true
    }
}
