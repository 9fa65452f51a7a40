// SPDX-License-Identifier: Apache-2.0
import Testing
import SpeakerCore
import SpeakerSystem
@testable import Board

/// The trace format and its two twins: every entry survives text and back,
/// a recorder around the replayer writes the trace it replays, and the
/// replayer notes a call that differs from the recording.
@Suite struct GPIOTraceTests {
    static let chip = GPIOChipInfo(path: "/dev/gpiochip1", name: "gpiochip1", label: "", lines: [])
    static func location(_ name: String, _ offset: Int) -> GPIOLineLocation {
        GPIOLineLocation(chip: chip, line: GPIOLineInfo(offset: offset, name: name, consumer: "", isUsed: false, isOutput: false))
    }

    static let entries: [GPIOTraceEntry] = [
        .library(GPIOLibrary(description: "libgpiod 2.5.0 (v2 API)", hasKernelDebounce: true, eventQueueSize: 1024)),
        .locate(names: ["GPIO17", "GPIO5"], directory: "/dev",
                result: .success(["GPIO17": location("GPIO17", 17), "GPIO5": location("GPIO5", 5)])),
        .locate(names: ["GPIO99"], directory: "/dev", result: .failure(.unknownLine(name: "GPIO99", chips: ["gpiochip0 [other]", "gpiochip1 [a, b]"]))),
        .requestInput(line: "GPIO17", chip: "gpiochip1", offset: 17,
                      settings: GPIOInputSettings(activeLow: true, bias: .pullUp, debounceMicroseconds: 5_000), result: .success(GPIORequestID(0))),
        .requestInput(line: "GPIO17", chip: "gpiochip1", offset: 17,
                      settings: GPIOInputSettings(activeLow: false, bias: .asIs, debounceMicroseconds: 0),
                      result: .failure(.request(line: "GPIO17", location: "gpiochip1 line 17", path: "/dev/gpiochip1", errno: 16,
                                                consumer: "ambient speaker"))),
        .requestOutput(line: "GPIO5", chip: "gpiochip1", offset: 5, activeLow: false, result: .success(GPIORequestID(1))),
        .startReader(inputs: [GPIORequestID(0)], error: nil),
        .take(at: 10_000_000_000, EdgeReads(reads: [
            EdgeRead(input: 0, readAt: 9_999_000_000, events: [.init(isActive: true, at: 9_998_000_000),
                                                               .init(isActive: false, at: 9_998_500_000, lost: 3)], reread: true),
            EdgeRead(input: 0, readAt: 9_999_500_000, events: [], error: 19),
        ], realtime: false)),
        .take(at: 10_001_000_000, EdgeReads(reads: [], realtime: nil)),
        .setOutput(GPIORequestID(1), active: true, at: 10_002_000_000, errno: nil),
        .setOutput(GPIORequestID(1), active: false, at: 10_003_000_000, errno: 5),
        .startReader(inputs: [GPIORequestID(0), GPIORequestID(2)], error: .reader(errno: 11)),
        .stopReader,
        .release(GPIORequestID(1)),
    ]

    @Test func everyEntrySurvivesTextAndBack() throws {
        let trace = GPIOTrace(entries: Self.entries)
        #expect(try GPIOTrace(text: trace.text) == trace)
        #expect(trace.text.hasPrefix("gpio-trace 1\nlibrary libgpiod%202.5.0%20(v2%20API) debounce=1 queue=1024\n"))
        #expect(trace.text.contains("\nread 0 9999000000 1@9998000000 0@9998500000+3 reread=1\nread 0 9999500000 error=19\n"))
    }

    @Test func aBadLineIsNamed() {
        #expect(throws: GPIOTraceError(line: 1, message: "expected \"gpio-trace 1\"")) { try GPIOTrace(text: "take 1 realtime=yes\n") }
        #expect(throws: GPIOTraceError(line: 3, message: "read: bad token \"1@x\"")) {
            try GPIOTrace(text: "gpio-trace 1\ntake 1 realtime=yes\nread 0 5 1@x\n")
        }
        #expect(throws: GPIOTraceError(line: 2, message: "a read outside a take")) { try GPIOTrace(text: "gpio-trace 1\nread 0 5\n") }
    }

    /// A recorder around the replayer, driven by the board, writes back the trace it replays.
    @Test func recordingAReplayedBoardGivesTheSameTrace() throws {
        let replay = try BoardReplay("v1", "converted-turn-minus-8")
        var text = ""
        let recorder = RecordingGPIOLines(wrapping: replay.lines, clock: { [loop = replay.loop] in loop.now() }) { text += $0 }
        let board = try GPIOBoard(config: replay.config, loop: replay.loop, logger: Logger(component: "gpio", backend: replay.log),
                                  lines: recorder, onEdge: { _ in }, onFailure: { _ in })
        replay.lines.play(on: replay.loop)
        board.close()
        #expect(replay.lines.mismatches == [])
        #expect(try GPIOTrace(text: text) == replay.trace)
    }

    @Test func aCallThatDiffersFromTheRecordingIsNoted() throws {
        let lines = try ReplayedGPIOLines(trace: GPIOTrace(entries: [
            .locate(names: ["GPIO17"], directory: "/dev", result: .success(["GPIO17": Self.location("GPIO17", 17)])),
            .release(GPIORequestID(0)),
        ]))
        #expect(throws: GPIOError.self) { try lines.locate(["GPIO18"], directory: "/dev") }
        lines.release(GPIORequestID(1))
        lines.stopReader()
        #expect(lines.mismatches == ["locate [\"GPIO18\"] in /dev: not the recorded call", "release 1: not the recorded call",
                                     "stop: after the end of the trace", "stop: not the recorded call"])
        #expect(lines.isFinished)
    }
}
