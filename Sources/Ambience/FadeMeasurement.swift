// SPDX-License-Identifier: Apache-2.0
/// Measures a long fade on rendered audio: the renderer plays `source` and
/// fades it out along the volume curve (`AmbienceRenderer.longFade`), and a
/// second renderer plays an identical source without the fade; per period,
/// the ratio of their RMS is the fade's gain on that period, free of the
/// material's own level changes. For the sleep timer's figures (unit tests
/// and `speaker-bench`); runs on the calling thread and allocates freely.
public struct FadeMeasurement: Sendable {
    /// From the fade's start to the first wholly silent period, in seconds.
    public var lengthSeconds: Double
    /// The largest level change between consecutive periods, in dB, over the
    /// volume curve's range (both periods above −50 dB relative to the level).
    public var largestStepDB: Double
    /// The largest sample-to-sample jump of the faded output divided by the
    /// largest of the material at full level (≤ 1: the fade adds no click).
    public var clickRatio: Double
    /// The output was exact zeros after the fade.
    public var endsInSilence: Bool

    /// Renders `seconds` of fade (and a second of silence after it) in
    /// periods of `periodFrames`; `makeSource` is called twice and must give
    /// identical sources (the same seed).
    public static func measure(makeSource: () -> SoundSource, sampleRate: Int = 48_000, seconds: Double,
                               periodFrames: Int = 1024) -> FadeMeasurement {
        let faded = AmbienceRenderer(sampleRate: sampleRate, maxFrames: periodFrames)
        let plain = AmbienceRenderer(sampleRate: sampleRate, maxFrames: periodFrames)
        faded.play(makeSource(), fadeFrames: 0)
        plain.play(makeSource(), fadeFrames: 0)
        let fadeFrames = Int(seconds * Double(sampleRate))
        faded.longFade(to: 0, frames: fadeFrames)
        let a = UnsafeMutablePointer<Float>.allocate(capacity: 2 * periodFrames)
        let b = UnsafeMutablePointer<Float>.allocate(capacity: 2 * periodFrames)
        defer { a.deallocate(); b.deallocate() }
        let floor = DSPMath.exp10(-VolumeCurve.rangeDB / 20)
        var previousGain: Double?
        var largestStep = 0.0
        var materialJump: Float = 0, fadedJump: Float = 0
        var lastA: Float = 0, lastB: Float = 0
        var silentAt: Int?
        var rendered = 0
        let total = fadeFrames + sampleRate
        while rendered < total {
            let n = min(periodFrames, total - rendered)
            faded.renderFloat(into: a, frames: n)
            plain.renderFloat(into: b, frames: n)
            var energyA = 0.0, energyB = 0.0
            var allZero = true
            for i in 0..<n {
                let x = a[2 * i], y = b[2 * i]
                energyA += Double(x * x)
                energyB += Double(y * y)
                if x != 0 || a[2 * i + 1] != 0 { allZero = false }
                fadedJump = max(fadedJump, abs(x - lastA))
                materialJump = max(materialJump, abs(y - lastB))
                lastA = x
                lastB = y
            }
            if allZero && silentAt == nil { silentAt = rendered }
            if !allZero { silentAt = nil }
            let gain = energyB > 0 ? (energyA / energyB).squareRoot() : 0
            if let previous = previousGain, previous > floor, gain > floor {
                largestStep = max(largestStep, abs(20 * DSPMath.log10(gain / previous)))
            }
            previousGain = gain
            rendered += n
        }
        while faded.takeRetired() != nil {}
        while plain.takeRetired() != nil {}
        return FadeMeasurement(lengthSeconds: Double(silentAt ?? rendered) / Double(sampleRate), largestStepDB: largestStep,
                               clickRatio: materialJump > 0 ? Double(fadedJump / materialJump) : 0,
                               endsInSilence: silentAt != nil)
    }
}
