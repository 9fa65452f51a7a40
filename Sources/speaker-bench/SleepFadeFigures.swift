// SPDX-License-Identifier: Apache-2.0
import Ambience

/// The sleep timer's fade measured on rendered audio (`FadeMeasurement`):
/// the default 300 s fade over the built-in loops, through the player's
/// renderer in 1024-frame periods. Reports, per sound,
/// `sleep_fade_length_<id>` (s), `sleep_fade_largest_step_<id>` (dB between
/// consecutive periods down to −50 dB, the curve's range) and `sleep_fade_click_<id>`
/// (the largest sample jump over the material's own: ≤ 1 is no click).
struct SleepFadeFigures {
    var soundIDs = ["pink", "rain", "surf"]
    var seconds = 300.0
    var sampleRate = 48_000

    func run(report: BenchReport) {
        for id in soundIDs {
            guard let sound = BuiltInSounds.sound(id: id) else {
                report.note("fade: no built-in sound \"\(id)\"; skipped")
                continue
            }
            let m = FadeMeasurement.measure(makeSource: { sound.makeSource(sampleRate: sampleRate, seed: 7) },
                                            sampleRate: sampleRate, seconds: seconds)
            report.note("fade \(id): \(seconds) s asked, silent after \(m.lengthSeconds) s (ends in silence: \(m.endsInSilence))")
            report.metric("sleep_fade_length_\(id)", m.lengthSeconds, unit: "s")
            report.metric("sleep_fade_largest_step_\(id)", m.largestStepDB, unit: "dB")
            report.metric("sleep_fade_click_\(id)", m.clickRatio, unit: "ratio")
        }
    }
}
