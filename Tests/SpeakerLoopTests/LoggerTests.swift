// SPDX-License-Identifier: Apache-2.0
import Testing
import SpeakerLoop

/// Untrusted text in log messages cannot forge lines, smuggle NULs or drive a
/// terminal, and cannot make a line unbounded.
@Suite struct LoggerTests {
    func logged(_ message: String) -> String {
        let memory = MemoryLogBackend()
        Logger(component: "main", threshold: .debug, backend: memory).notice(message)
        return memory.entries.last?.message ?? "<nothing logged>"
    }

    @Test func aNewlineCannotStartAForgedLineAtAnyPriority() {
        let text = logged("command rejected (unknown-action): unknown action \"x\n<0>main: FORGED\"")
        #expect(text == #"command rejected (unknown-action): unknown action "x\n<0>main: FORGED""#)
        #expect(!text.contains("\n"))
        #expect(logged("a\r\nb\u{2028}c\u{85}d") == #"a\r\nb\u{2028}c\u{85}d"#)
    }

    @Test func nulEscapeAndOtherControlsAreVisible() {
        #expect(logged("id \u{0}x") == #"id \0x"#)
        #expect(logged("\u{1B}[2J\u{1B}]0;pwned\u{7}") == #"\x1b[2J\x1b]0;pwned\x07"#)
        #expect(logged("tab\there\u{7F}") == #"tab\there\x7f"#)
        #expect(logged("bidi \u{202E}txt.exe") == #"bidi \u{202e}txt.exe"#)
    }

    @Test func plainTextAndUnicodeArePassedUnchanged() {
        #expect(logged("playing \"rain\", level 45%") == "playing \"rain\", level 45%")
        #expect(logged("Café — 雨の音 🌧") == "Café — 雨の音 🌧")
        #expect(logged(#"back\slash \n stays"#) == #"back\slash \n stays"#)
    }

    @Test func longMessagesAreCutAtACharacterBoundaryAndSaySo() {
        let long = String(repeating: "é", count: 5000)  // 10,000 bytes
        let text = logged(long)
        #expect(text.utf8.count <= Logger.maxMessageBytes + 40)
        #expect(text.hasSuffix("… (3856 more bytes cut)"), "\(text.suffix(40))")
        #expect(text.hasPrefix(String(repeating: "é", count: 100)))
        let escapes = logged(String(repeating: "\u{0}", count: 4000))
        #expect(escapes.utf8.count <= Logger.maxMessageBytes + 40, "escaping cannot grow a line past the bound")
    }
}
