// SPDX-License-Identifier: Apache-2.0
/// A generated sound that needs no file: a stable id, a display name, a
/// one-line summary and a factory for its source.
public struct BuiltInSound: Sendable, Equatable {
    /// Stable identifier used in config, MQTT and saved state (`white`, `pink`, …).
    public let id: String
    /// Human-readable name, e.g. "Pink noise".
    public let name: String
    /// One line describing the sound.
    public let summary: String

    /// Makes a fresh source at `sampleRate`. Call on the main thread, then hand
    /// the source to the audio thread. `seed` makes the output reproducible.
    public func makeSource(sampleRate: Int, seed: UInt64? = nil) -> SoundSource {
        switch id {
        case "pink": return seed.map { PinkNoise(seed: $0) } ?? PinkNoise()
        case "brown": return seed.map { BrownNoise(sampleRate: sampleRate, seed: $0) } ?? BrownNoise(sampleRate: sampleRate)
        case "rain": return seed.map { RainSound(sampleRate: sampleRate, seed: $0) } ?? RainSound(sampleRate: sampleRate)
        case "surf": return seed.map { SurfSound(sampleRate: sampleRate, seed: $0) } ?? SurfSound(sampleRate: sampleRate)
        default: return seed.map { WhiteNoise(seed: $0) } ?? WhiteNoise()
        }
    }
}

/// The catalog of built-in sounds, in catalog order. Any thread.
public enum BuiltInSounds {
    /// white, pink, brown, rain, surf — in that order.
    public static let all: [BuiltInSound] = [
        BuiltInSound(id: "white", name: "White noise", summary: "Flat hiss across all frequencies"),
        BuiltInSound(id: "pink", name: "Pink noise", summary: "Softer, balanced noise falling 3 dB per octave"),
        BuiltInSound(id: "brown", name: "Brown noise", summary: "Deep rumble falling 6 dB per octave"),
        BuiltInSound(id: "rain", name: "Rain", summary: "Steady rainfall with scattered droplets"),
        BuiltInSound(id: "surf", name: "Surf", summary: "Waves slowly swelling and drawing back on a shore"),
    ]

    /// The built-in sound with `id`, or nil.
    public static func sound(id: String) -> BuiltInSound? {
        all.first { $0.id == id }
    }
}
