// SPDX-License-Identifier: Apache-2.0
import Ambience

/// A source that outputs a constant value on both channels, so envelopes can be
/// read straight off the output.
final class ConstantSource: SoundSource, @unchecked Sendable {
    // @unchecked Sendable: immutable after init.
    let value: Float
    init(_ value: Float) { self.value = value }
    func render(into buffer: UnsafeMutablePointer<Float>, frames: Int) {
        buffer.update(repeating: value, count: 2 * frames)
    }
}

extension AmbienceRenderer {
    /// Renders `frames` frames and returns them as an array (test helper).
    func floats(_ frames: Int) -> (samples: [Float], outcome: RenderOutcome) {
        var out = [Float](repeating: .nan, count: 2 * frames)
        let outcome = out.withUnsafeMutableBufferPointer { renderFloat(into: $0.baseAddress!, frames: frames) }
        return (out, outcome)
    }
}
