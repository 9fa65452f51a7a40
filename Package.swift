// swift-tools-version:6.0
// SPDX-License-Identifier: Apache-2.0
// ambient-speaker: Swift firmware for a Raspberry Pi ambience speaker.
// Dependencies point one way: executable -> adapters -> ports -> core. Only the
// adapter modules import C; SpeakerCore, SpeakerProtocol, SpeakerWatch, Ambience,
// SpeakerLoop, SpeakerPorts and SpeakerRuntime are pure Swift.
import PackageDescription

let package = Package(
    name: "ambient-speaker",
    products: [
        .executable(name: "ambient-speaker", targets: ["ambient-speaker"]),
        .executable(name: "speaker-bench", targets: ["speaker-bench"]),
        .library(name: "SpeakerProtocol", targets: ["SpeakerProtocol"]),
        .library(name: "SpeakerWatch", targets: ["SpeakerWatch"]),
        // For the libFuzzer package in Fuzz/ (command and config decoding).
        .library(name: "SpeakerCore", targets: ["SpeakerCore"]),
    ],
    dependencies: [],
    targets: [
        // Payload types of the MQTT contract and a small JSON value type. No C, no I/O.
        .target(name: "SpeakerProtocol"),
        // The reading side: follows a fleet of speakers by the contract's rules and turns
        // their topics into session lifecycle events; commands that wait for their
        // session. Pure Swift over SpeakerProtocol; the broker behind a small port.
        .target(name: "SpeakerWatch", dependencies: ["SpeakerProtocol"]),
        // The pure core: state, actions, reduce(), effects, input decoding, config.
        .target(name: "SpeakerCore", dependencies: ["SpeakerProtocol"]),
        // Pure DSP: generated sounds, fades, gain ramps, sample conversion.
        .target(name: "Ambience"),
        // The loop protocol and its manual-time twin, the logger and its in-memory backend. No C.
        .target(name: "SpeakerLoop"),
        // The runtime's ports: what each service exchanges with its adapter (requests,
        // reports, errors as values). No C; the adapters below conform to them.
        .target(name: "SpeakerPorts", dependencies: ["SpeakerCore", "SpeakerProtocol", "Ambience"]),

        // C libraries from Debian.
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),
        .systemLibrary(name: "CSndfile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(name: "CSoxr", pkgConfig: "soxr", providers: [.apt(["libsoxr-dev"])]),
        .systemLibrary(name: "CFLAC", pkgConfig: "flac", providers: [.apt(["libflac-dev"])]),

        // Adapters: one per outside world.
        .target(name: "CSystemShim"),
        .target(name: "SpeakerSystem", dependencies: ["CSystemShim", "SpeakerLoop"]),
        .target(name: "AudioALSA", dependencies: ["CALSA", "Ambience", "SpeakerSystem", "SpeakerPorts"]),
        // Sound files: libFLAC (FLAC) and libsndfile (the rest) decoding, resampling, read-ahead, the catalog.
        .target(name: "SoundFiles", dependencies: ["CSndfile", "CFLAC", "CSoxr", "Ambience", "SpeakerProtocol", "SpeakerSystem",
                                                   "SpeakerPorts"]),
        .target(name: "MQTTLink", dependencies: ["CMosquitto", "SpeakerSystem", "SpeakerCore", "SpeakerPorts", "SpeakerWatch"]),
        // libgpiod v1 (Debian 12) or v2 (scripts/build-libgpiod-v2), whichever pkg-config finds;
        // CGPIOD is the one C file that picks the API (#ifdef GPIOD_LINE_BULK_MAX_LINES).
        .systemLibrary(name: "CLibGPIOD", pkgConfig: "libgpiod", providers: [.apt(["libgpiod-dev"])]),
        .target(name: "CGPIOD", dependencies: ["CLibGPIOD"]),
        .target(name: "Board", dependencies: ["SpeakerCore", "SpeakerSystem", "CGPIOD", "SpeakerPorts"]),
        // The host's files and systemd: the state and revision files, the config file, the notify socket.
        .target(name: "SpeakerHost", dependencies: ["SpeakerCore", "SpeakerProtocol", "SpeakerSystem", "SpeakerPorts"]),

        // The runtime: one service per seam (audio, board, MQTT, persistence,
        // systemd) in a ServiceGroup, around the core, each talking to its
        // adapter through a port. No C: it links none of the libraries above.
        // A library so that tests run it whole on the manual-time loop.
        .target(name: "SpeakerRuntime", dependencies: ["SpeakerCore", "SpeakerProtocol", "SpeakerPorts", "SpeakerLoop"]),

        // Thin executables. ambient-speaker builds the live adapters and wires them to the runtime.
        .executableTarget(
            name: "ambient-speaker",
            dependencies: ["SpeakerRuntime", "SpeakerPorts", "SpeakerCore", "SpeakerProtocol", "Ambience", "AudioALSA", "SoundFiles",
                           "MQTTLink", "SpeakerSystem", "SpeakerHost", "Board", "SpeakerWatch"]),
        .executableTarget(
            name: "speaker-bench",
            dependencies: ["SpeakerCore", "SpeakerProtocol", "Ambience", "MQTTLink", "SpeakerSystem", "TestSupport", "SeededRandom"],
            path: "Sources/speaker-bench"),

        // Test support: a real mosquitto broker and a libmosquitto peer for tests and benchmarks.
        .target(name: "TestSupport", dependencies: ["CMosquitto", "SpeakerSystem", "SeededRandom"], path: "Tests/TestSupport"),

        // The hostile-broker suite: a real MQTTLink against a fake broker sending seeded malformed packets
        // (scripts/hostile-broker runs it in chunks and counts crashes).
        .executableTarget(name: "hostile-broker", dependencies: ["MQTTLink", "SpeakerSystem", "TestSupport"],
                          path: "Tests/HostileBroker"),

        // A seeded generator for tests and benchmarks whose inputs must repeat.
        .target(name: "SeededRandom", path: "Tests/SeededRandom"),

        .testTarget(name: "SpeakerProtocolTests", dependencies: ["SpeakerProtocol", "SeededRandom"]),
        .testTarget(name: "SpeakerWatchTests", dependencies: ["SpeakerWatch", "SpeakerProtocol"]),
        .testTarget(name: "SpeakerCoreTests", dependencies: ["SpeakerCore", "SpeakerProtocol", "SeededRandom"]),
        .testTarget(name: "AmbienceTests", dependencies: ["Ambience"]),
        .testTarget(name: "AudioALSATests", dependencies: ["AudioALSA", "Ambience", "SpeakerSystem"]),
        .testTarget(name: "SoundFilesTests", dependencies: ["SoundFiles", "Ambience", "SpeakerSystem", "CSndfile", "CFLAC"]),
        .testTarget(name: "MQTTLinkTests", dependencies: ["MQTTLink", "TestSupport", "SpeakerSystem", "SpeakerCore", "SeededRandom"]),
        .testTarget(name: "SpeakerLoopTests", dependencies: ["SpeakerLoop"]),
        // The state, revision and config files and the notify socket, on real files.
        .testTarget(name: "SpeakerHostTests", dependencies: ["SpeakerHost", "SpeakerSystem", "SpeakerCore", "SpeakerProtocol"]),
        .testTarget(name: "SpeakerSystemTests", dependencies: ["SpeakerSystem", "Board", "SpeakerCore"]),
        // The Board module: the simulated board, its control socket, the amp stepper, the edge
        // reorder, and the libgpiod board replayed from traces recorded on gpio-sim (Tests/HIL)
        // on the manual-time loop; the real libgpiod (v1 or v2 build) for chip enumeration.
        .testTarget(name: "BoardTests", dependencies: ["Board", "SpeakerSystem", "SpeakerCore"],
                    exclude: ["Traces", "DeviceTreeLines"]),
        // The whole runtime (core + services) on the manual-time loop, with in-memory audio and MQTT behind their ports.
        .testTarget(name: "SpeakerRuntimeTests", dependencies: ["SpeakerRuntime", "SpeakerPorts", "SpeakerLoop", "SpeakerCore",
                                                                "SpeakerProtocol", "SpeakerSystem", "SpeakerHost", "Board", "AudioALSA",
                                                                "SoundFiles", "Ambience"]),
        .testTarget(name: "EndToEndTests", dependencies: ["TestSupport", "SpeakerSystem", "SpeakerProtocol"]),
        // The daemon as a service: persistence under kill -9, systemd lifecycle, the unit and the board kit.
        .testTarget(name: "DaemonTests", dependencies: ["TestSupport", "SpeakerCore", "SpeakerProtocol", "SpeakerHost"]),
    ]
)
