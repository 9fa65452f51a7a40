// swift-tools-version:6.0
// SPDX-License-Identifier: Apache-2.0
// libFuzzer targets for the speaker's untrusted inputs. A separate package so
// the main build never links an executable without `main` (libFuzzer brings
// its own). Build and run: see DEVELOPERS.md or scripts/fuzz.
import PackageDescription

let package = Package(
    name: "ambient-speaker-fuzz",
    dependencies: [.package(name: "ambient-speaker", path: "..")],
    targets: [
        // `command` payloads: CommandDecoder, the JSON parser, the result, and the core handling them.
        .executableTarget(
            name: "FuzzCommand",
            dependencies: [.product(name: "SpeakerProtocol", package: "ambient-speaker"),
                           .product(name: "SpeakerCore", package: "ambient-speaker")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        // The config file: ConfigDecoder and the resolved config's JSON.
        .executableTarget(
            name: "FuzzConfig",
            dependencies: [.product(name: "SpeakerProtocol", package: "ambient-speaker"),
                           .product(name: "SpeakerCore", package: "ambient-speaker")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        // The SD card image's settings file: ImageSettingsDecoder and the applier's plan.
        .executableTarget(
            name: "FuzzSettings",
            dependencies: [.product(name: "SpeakerProtocol", package: "ambient-speaker"),
                           .product(name: "SpeakerCore", package: "ambient-speaker")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
    ]
)
