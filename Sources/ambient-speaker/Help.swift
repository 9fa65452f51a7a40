// SPDX-License-Identifier: Apache-2.0
/// Help texts for `--help` and `COMMAND --help`.
enum Help {
    static let general = """
    ambient-speaker \(CommandLineTool.version) — ambience speaker firmware (GPIO buttons and knob, ALSA, MQTT)

    usage:
      ambient-speaker run [--config FILE]        the speaker (default); FILE defaults to \(CommandLineTool.defaultConfigPath)
      ambient-speaker demo [--config FILE]       simulated board driven from the keyboard (space n p ← → q)
      ambient-speaker check-config FILE          validate and print the resolved config; exit 0 / 1
      ambient-speaker config-reference [--check] the configuration reference (Markdown)
      ambient-speaker apply-settings --settings FILE --root DIR [--error-file FILE] [--service-user NAME]
                                                 apply the SD card image's settings file to DIR (all or nothing)
      ambient-speaker devices                    list ALSA playback devices
      ambient-speaker sounds [--config FILE]     list the catalog
      ambient-speaker render SOUND|MIX --seconds N --output PATH [--level L] [--config FILE]
                                                 render a sound or mix offline to .wav or .raw (S16_LE, 48 kHz, stereo)
      ambient-speaker watch --broker HOST:PORT [--prefix P] [--device ID]... [--post URL]
                                                 follow speakers on a broker: one JSON line per session start, update, end
      ambient-speaker --version | --help         (every command has --help)

    options: --log-level error|warning|notice|info|debug (default info; logs go to stderr with <N> priorities)
    exit codes: 0 success, 1 bad configuration or arguments, 2 runtime failure
    """

    static func text(for command: String) -> String? {
        switch command {
        case "run": return "ambient-speaker run [--config FILE]\n  Runs the speaker until SIGTERM/SIGINT. Without --config, reads \(CommandLineTool.defaultConfigPath) if it exists, else uses built-in defaults."
        case "demo": return "ambient-speaker demo [--config FILE]\n  Runs with the simulated board, driven from the keyboard: space play/pause, n next, p previous, ← → knob, q quit.\n  Audio goes to the default ALSA device, or to ambient-demo.wav when there is no sound card."
        case "config-reference": return "ambient-speaker config-reference [--check]\n  Prints the configuration reference (docs/configuration.md) rendered from the configuration model; --check lists the keys the model and the reference disagree on (exit 1 if any)."
        case "check-config": return "ambient-speaker check-config FILE\n  Validates FILE and prints the resolved configuration. Exit 0 when valid, 1 with a message naming the key otherwise."
        case "apply-settings": return "ambient-speaker apply-settings --settings FILE --root DIR [--error-file FILE] [--service-user NAME]\n  Checks the SD card image's settings FILE (docs/install.md) and applies it to the root DIR: Wi-Fi (the PSK derived here), host name, time zone, SSH keys, DAC, the broker's password and CA, the daemon's config.\n  Every file is staged first and renamed into place at the end, so an invalid FILE changes nothing; the reason (never a secret) goes to stdout and to --error-file (mode 0600).\n  --service-user owns the password file. Exit 0 applied, 1 invalid."
        case "devices": return "ambient-speaker devices\n  Lists ALSA playback devices."
        case "sounds": return "ambient-speaker sounds [--config FILE]\n  Lists the catalog in playback order: sounds, then mixes."
        case "render": return "ambient-speaker render SOUND|MIX --seconds N --output PATH [--level L] [--config FILE]\n  Renders N seconds of SOUND (built-in or a file from audio.soundsDirectory) or MIX (config mixes, or saved over MQTT) exactly as the player would (same source, loop, renderer, volume curve; level defaults to 1.0)\n  to PATH: .wav (with header) or .raw (S16_LE, 48 kHz, stereo)."
        case "watch": return "ambient-speaker watch --broker HOST:PORT [--prefix P] [--device ID]... [--post URL]\n  Follows every speaker under prefix P (default ambient-speaker) on the broker, by the MQTT contract's rules, and prints one JSON line\n  per session lifecycle event on stdout: {\"event\":\"start\"|\"update\"|\"end\",\"device\":ID,\"epoch\":E,\"session\":{…},\"at\":TIME}\n  (\"inferred\":true on an end that was never published: a new session or epoch replaced it). --device (repeatable) follows only\n  the named speakers, subscribed by name: brokers such as RabbitMQ 3.x give retained messages only to such subscriptions.\n  --post http://HOST[:PORT]/PATH also POSTs each line (application/json), one at a time in order, retrying a failure (no 2xx)\n  after 0.5 s doubling to 30 s until accepted; failures are logged on stderr. Runs until SIGTERM/SIGINT (then 5 s to deliver what waits)."
        default: return nil
        }
    }
}
