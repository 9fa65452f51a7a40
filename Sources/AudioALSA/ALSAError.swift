// SPDX-License-Identifier: Apache-2.0
import CALSA

/// A failed ALSA (or supporting system) call: which device, which C function,
/// the negative error code it returned and `snd_strerror`'s text for it.
public struct ALSAError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The pcm name, e.g. `hw:CARD=sndrpihifiberry` or `file:'/tmp/x.raw',raw`.
    public var device: String
    /// The C function that failed, e.g. `snd_pcm_open`.
    public var function: String
    /// The (negative) error code it returned.
    public var code: Int32
    /// Human-readable text from `snd_strerror(code)`.
    public var message: String

    /// Builds the error for `code` returned by `function` on `device`.
    public init(device: String, function: String, code: Int32) {
        self.device = device
        self.function = function
        self.code = code
        self.message = String(cString: snd_strerror(code))
    }

    /// `audio device "NAME": FUNCTION failed: MESSAGE (CODE)`.
    public var description: String {
        "audio device \"\(device)\": \(function) failed: \(message) (\(code))"
    }
}
