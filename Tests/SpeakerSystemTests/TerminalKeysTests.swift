// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import Testing
import SpeakerSystem
import Board

@Suite struct TerminalKeysTests {
    @Test func decoderHandlesLettersSpaceArrowsAndSplitSequences() {
        var decoder = KeyDecoder()
        #expect(decoder.feed(Array(" np\u{1b}[C\u{1b}[Dq".utf8)) == [
            .space, .character("n"), .character("p"), .right, .left, .character("q"),
        ])
        #expect(decoder.feed([0x1B]) == [])
        #expect(decoder.feed([UInt8(ascii: "[")]) == [])
        #expect(decoder.feed([UInt8(ascii: "A")]) == [.up])
        #expect(decoder.feed(Array("\u{1b}OB\u{1b}[3~x".utf8)) == [.down, .character("x")])
        #expect(decoder.feed([0x1B, UInt8(ascii: "n"), 0x0D, 0x03]) == [.escape, .character("n"), .enter, .control(3)])
    }

    @Test func readsKeysFromARealTerminalAndRestoresIt() throws {
        var master: Int32 = -1, slave: Int32 = -1
        #expect(openpty(&master, &slave, nil, nil, nil) == 0)
        defer { close(master); close(slave) }
        var before = termios()
        _ = tcgetattr(slave, &before)
        #expect(before.c_lflag & tcflag_t(ICANON) != 0)

        let loop = try EventLoop()
        var keys: [Key] = []
        let terminal = try TerminalKeys(loop: loop, fd: slave) { key in
            keys.append(key)
            if key == .character("q") { loop.stop() }
        }
        var raw = termios()
        _ = tcgetattr(slave, &raw)
        #expect(raw.c_lflag & tcflag_t(ICANON | ECHO) == 0)

        let typed = Array(" n\u{1b}[C\u{1b}[Dq".utf8)
        _ = typed.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
        loop.schedule(after: 30_000) { loop.stop() }
        try loop.run()
        #expect(keys == [.space, .character("n"), .right, .left, .character("q")])
        #expect(keys.compactMap(DemoKeyboard.action(for:)) == [
            .boardCommand("press playPause"), .boardCommand("press next"),
            .boardCommand("turn +1"), .boardCommand("turn -1"), .quit,
        ])

        terminal.restore()
        var after = termios()
        _ = tcgetattr(slave, &after)
        #expect(after.c_lflag == before.c_lflag)
        #expect(throws: SystemError.self) { _ = try TerminalKeys(loop: loop, fd: -1) { _ in } }
    }
}
