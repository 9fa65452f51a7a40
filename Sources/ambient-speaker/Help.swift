// SPDX-License-Identifier: Apache-2.0
/// Help texts for `--help` and `COMMAND --help`.
enum Help {
    static let general = """
    ambient-speaker \(CommandLineTool.version) — ambience speaker firmware (GPIO buttons and knob, ALSA, MQTT)

    usage:
      ambient-speaker run [--config FILE]        the speaker (default); FILE defaults to \(CommandLineTool.defaultConfigPath)
      ambient-speaker demo [--config FILE]       simulated board driven from the keyboard (space n p ← → q)
      ambient-speaker check-config FILE          validate and print the resolved config; exit 0 / 1
      ambient-speaker devices                    list ALSA playback devices
      ambient-speaker sounds [--config FILE]     list the catalog
      ambient-speaker render SOUND --seconds N --output PATH [--level L] [--config FILE]
                                                 render a sound offline to .wav or .raw (S16_LE, 48 kHz, stereo)
      ambient-speaker --version | --help         (every command has --help)

    options: --log-level error|warning|notice|info|debug (default info; logs go to stderr with <N> priorities)
    exit codes: 0 success, 1 bad configuration or arguments, 2 runtime failure
    """

    static func text(for command: String) -> String? {
        switch command {
        case "run": return "ambient-speaker run [--config FILE]\n  Runs the speaker until SIGTERM/SIGINT. Without --config, reads \(CommandLineTool.defaultConfigPath) if it exists, else uses built-in defaults."
        case "demo": return "ambient-speaker demo [--config FILE]\n  Runs with the simulated board, driven from the keyboard: space play/pause, n next, p previous, ← → knob, q quit.\n  Audio goes to the default ALSA device, or to ambient-demo.wav when there is no sound card."
        case "check-config": return "ambient-speaker check-config FILE\n  Validates FILE and prints the resolved configuration. Exit 0 when valid, 1 with a message naming the key otherwise."
        case "devices": return "ambient-speaker devices\n  Lists ALSA playback devices."
        case "sounds": return "ambient-speaker sounds [--config FILE]\n  Lists the catalog in playback order."
        case "render": return "ambient-speaker render SOUND --seconds N --output PATH [--level L] [--config FILE]\n  Renders N seconds of SOUND (built-in or a file from audio.soundsDirectory) exactly as the player would (same source, loop, renderer, volume curve; level defaults to 1.0)\n  to PATH: .wav (with header) or .raw (S16_LE, 48 kHz, stereo)."
        default: return nil
        }
    }
}
