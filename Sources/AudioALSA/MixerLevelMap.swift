// SPDX-License-Identifier: Apache-2.0
/// Maps the speaker's level in [0, 1] to a mixer element's dB and back, with
/// the same perceptual curve as the software volume (`VolumeCurve`): level 1
/// is the element's top, each 0.1 below it is 5 dB less, level 0 is mute.
/// When the element's range is shorter than 50 dB, levels below its bottom
/// play at its bottom (and read back as the bottom's level). Any thread.
public struct MixerLevelMap: Sendable, Equatable {
    /// The element's range in dB.
    public var minDB: Double
    public var maxDB: Double
    /// The curve's span (50 dB, as `VolumeCurve.rangeDB`).
    public var rangeDB: Double = 50

    /// A map for an element spanning `minDB…maxDB`.
    public init(minDB: Double, maxDB: Double) {
        self.minDB = minDB
        self.maxDB = maxDB
    }

    /// The dB to write for `level`; nil means mute (level 0).
    public func db(level: Double) -> Double? {
        guard level > 0, !level.isNaN else { return nil }
        return max(minDB, maxDB - rangeDB * (1 - min(level, 1)))
    }

    /// The level an element reading `db` stands for (nil = muted → 0), rounded to 4 decimals.
    public func level(db: Double?) -> Double {
        guard let db else { return 0 }
        let level = min(1, max(0, 1 + (db - maxDB) / rangeDB))
        return (level * 10_000).rounded() / 10_000
    }
}
