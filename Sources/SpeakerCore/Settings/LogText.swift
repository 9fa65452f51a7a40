// SPDX-License-Identifier: Apache-2.0
/// Text from the settings file made safe for one journal or console line:
/// every control character (C0, DEL and the C1 range, which holds the
/// terminal's CSI) becomes `\u00XX`, so a key name or a host can neither
/// start a line with its own `<0>` priority nor send escape sequences to
/// the console. Pure; any thread.
public enum LogText {
    /// `text` with its control characters escaped; every other character kept.
    public static func escaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            let v = scalar.value
            if v < 0x20 || (0x7F...0x9F).contains(v) {
                let digits = Array("0123456789abcdef")
                out += "\\u00" + String(digits[Int(v >> 4)]) + String(digits[Int(v & 15)])
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
