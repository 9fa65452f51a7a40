// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerSystem
import TestSupport

/// End-to-end figures against the real speaker binary on loopback: a private
/// mosquitto (`TestBroker`), `ambient-speaker run` with a temporary config
/// (simulated board, audio into a raw file, no fades), and a `TestPeer` in
/// the role of the server (see `CommandTimer` for what is timed):
///
/// - `broker_roundtrip_p50_ms` / `_p99_ms`: the floor;
/// - `command_to_session_latency_p50_ms` / `_p99_ms`: `setVolume`, while playing;
/// - `command_to_session_latency_play_pause_p50_ms` / `_p99_ms`, and the
///   `_play_` / `_pause_` halves;
/// - `command_to_result_latency_p50_ms` / `_p99_ms` (`setVolume`) and
///   `command_to_result_latency_play_pause_p50_ms` / `_p99_ms`: publish to
///   the `command/result` with the command's id, from the same commands;
/// - `rss_playing_kb`: the speaker's peak `VmRSS` over one second of playing.
///
/// Runs on the calling thread (the peer has its own network thread).
struct SpeakerLatency {
    /// Path of the `ambient-speaker` executable.
    var speakerExecutable: String
    /// `setVolume` commands timed.
    var volumeCommands = 300
    /// `pause`/`play` commands timed (alternating, starting with pause).
    var transportCommands = 300
    /// Broker round trips timed.
    var echoes = 300
    /// When set, only the command path runs (`speaker-bench command`): this
    /// many blocks, each of `echoes / blocks` floor round trips followed by
    /// `volumeCommands / blocks` `setVolume` commands, so the floor and the
    /// command are sampled side by side through the whole run (a noisy
    /// host's slow spells land in both); see ``commandPath(timer:report:)``.
    var interleavedBlocks: Int?

    private let root = "ambient-speaker/bench"

    /// Creates the benchmark for the speaker at `speakerExecutable`.
    init(speakerExecutable: String) { self.speakerExecutable = speakerExecutable }

    /// Runs everything, reporting figures as they come. Throws when the
    /// broker, the speaker or the peer cannot be set up; cleans up either way
    /// (speaker SIGTERM, then peer disconnect and broker stop, temp files removed).
    func run(report: BenchReport) throws {
        let directory = try BenchDirectory()
        defer { directory.remove() }
        let broker = try TestBroker()
        defer { broker.stop() }
        try directory.write("config.json", text: config(port: broker.port, directory: directory))
        try directory.makeDirectory("state")
        report.note("speaker \(speakerExecutable), broker 127.0.0.1:\(broker.port), files in \(directory.path)")
        let peer = try TestPeer(port: broker.port)
        defer { peer.disconnect() }
        try peer.connect()
        let timer = CommandTimer(peer: peer, root: root, report: report)
        try timer.subscribe()

        let speaker = try ChildProcess(executable: speakerExecutable,
                                       arguments: ["run", "--config", directory.file("config.json")],
                                       logPath: directory.file("speaker.log"))
        defer {
            let wasRunning = speaker.isRunning
            speaker.send(SIGTERM)
            if let code = speaker.waitForExit(timeout: 5) {
                report.note("speaker exited with \(code)" + (wasRunning ? " after SIGTERM" : " (before SIGTERM)"))
            } else {
                speaker.send(SIGKILL)
                report.note("speaker still running 5 s after SIGTERM; sent SIGKILL (exit \(speaker.waitForExit(timeout: 5).map(String.init) ?? "?"))")
            }
        }
        // Up to 20 s for the first session, in slices, so a speaker that exits at start-up is noticed at once.
        var firstSession: ReceivedMessage?
        for _ in 0..<40 where firstSession == nil && speaker.isRunning {
            firstSession = peer.waitForMessage(topic: "\(root)/session", timeout: 0.5)
        }
        guard let first = firstSession else {
            let state = speaker.isRunning ? "it is still running" : "it exited"
            throw BenchError("no session from the speaker (\(state)); its log:\n" + directory.tail("speaker.log"))
        }
        report.note("first session (retained: \(first.retain)): \(first.payloadString.prefix(120))…")

        if let blocks = interleavedBlocks {
            try startPlaying(first: first, timer: timer, directory: directory)
            commandPath(timer: timer, blocks: blocks, speaker: speaker.pid, report: report)
            return
        }
        let floor = timer.brokerRoundTrips(echoes)
        floor.report("broker_roundtrip", to: report)

        try startPlaying(first: first, timer: timer, directory: directory)
        let volume = timer.volumeCommands(volumeCommands)
        volume.session.report("command_to_session_latency", to: report)
        volume.result.report("command_to_result_latency", to: report)
        residentMemory(of: speaker, report: report)

        let (play, pause) = timer.transportCommands(transportCommands)
        var both = play
        both.merge(pause)
        both.session.report("command_to_session_latency_play_pause", to: report)
        play.session.report("command_to_session_latency_play", to: report)
        pause.session.report("command_to_session_latency_pause", to: report)
        both.result.report("command_to_result_latency_play_pause", to: report)
        play.result.report("command_to_result_latency_play", to: report)
        pause.result.report("command_to_result_latency_pause", to: report)
        compare([("setVolume", volume.result), ("play/pause", both.result)], with: floor, report: report)
        if timer.rejected > 0 {
            report.note("\(timer.rejected) commands got a result with ok != true; log tail:\n" + directory.tail("speaker.log"))
        }
    }

    /// Starts playback unless the first session says it plays already.
    private func startPlaying(first: ReceivedMessage, timer: CommandTimer, directory: BenchDirectory) throws {
        guard SessionFields(first.payload).isPlaying != true else { return }
        guard timer.time(action: "play", id: "start", expecting: { $0.isPlaying == true }).session != nil else {
            throw BenchError("the speaker did not start playing; its log:\n" + directory.tail("speaker.log"))
        }
    }

    /// The command path beside its anchor (the goal: the speaker adds at
    /// most 0.1 ms at p50 over two hops of the broker floor). A `setVolume`
    /// crosses the broker twice (peer → speaker, speaker → peer), so its
    /// anchor is twice the floor's p50 from the same run:
    /// `command_path_added_p50_ms` = result p50 − 2 × floor p50.
    /// Also notes the CPU time of each of the speaker's threads per command
    /// (`/proc` schedstat over the command blocks, less the same thread's
    /// time during the floor blocks, scaled to the same duration: the audio
    /// thread keeps playing throughout).
    private func commandPath(timer: CommandTimer, blocks: Int, speaker pid: Int32, report: BenchReport) {
        var floor = LatencySamples()
        var volume = CommandTimer.CommandSamples()
        let echoesPerBlock = max(1, echoes / blocks), commandsPerBlock = max(1, volumeCommands / blocks)
        var floorCPU: [Int: UInt64] = [:], commandCPU: [Int: UInt64] = [:]
        var floorWall: UInt64 = 0, commandWall: UInt64 = 0
        for block in 0..<blocks {
            let before = ThreadCPU(pid: pid), started = MonotonicClock.now()
            floor.merge(timer.brokerRoundTrips(echoesPerBlock))
            let middle = ThreadCPU(pid: pid), switched = MonotonicClock.now()
            volume.merge(timer.volumeCommands(commandsPerBlock, firstID: block * commandsPerBlock))
            let after = ThreadCPU(pid: pid), ended = MonotonicClock.now()
            for (tid, ns) in middle.since(before) { floorCPU[tid, default: 0] += ns }
            for (tid, ns) in after.since(middle) { commandCPU[tid, default: 0] += ns }
            floorWall += switched - started
            commandWall += ended - switched
        }
        let commands = Double(blocks * commandsPerBlock)
        let scale = floorWall > 0 ? Double(commandWall) / Double(floorWall) : 0
        let perThread = commandCPU.sorted { $0.key < $1.key }.map { tid, ns -> String in
            let idle = Double(floorCPU[tid] ?? 0) * scale
            return "\(tid): \(Int(((Double(ns) - idle) / commands / 1000).rounded())) µs"
        }
        report.note("speaker CPU per setVolume by thread (less its idle rate during the floor blocks): "
                    + perThread.joined(separator: ", "))
        floor.report("broker_roundtrip", to: report)
        volume.session.report("command_to_session_latency", to: report)
        volume.result.report("command_to_result_latency", to: report)
        guard let f50 = floor.percentileMilliseconds(50), let r50 = volume.result.percentileMilliseconds(50) else { return }
        report.metric("two_hop_floor_p50_ms", 2 * f50, unit: "ms")
        report.metric("command_path_added_p50_ms", r50 - 2 * f50, unit: "ms")
        compare([("setVolume", volume.result)], with: floor, report: report)
    }

    /// One stderr line per kind of command: its result latency beside the
    /// broker floor of the same run, and what the speaker adds on top.
    private func compare(_ kinds: [(String, LatencySamples)], with floor: LatencySamples, report: BenchReport) {
        guard let f50 = floor.percentileMilliseconds(50), let f99 = floor.percentileMilliseconds(99) else { return }
        for (name, samples) in kinds {
            guard let r50 = samples.percentileMilliseconds(50), let r99 = samples.percentileMilliseconds(99) else { continue }
            report.note("\(name) command → result: p50 \(r50) ms, p99 \(r99) ms; broker floor p50 \(f50) ms, p99 \(f99) ms "
                        + "(speaker adds ≈ \(r50 - f50) ms at p50 over one hop, \(r50 - 2 * f50) ms over two)")
        }
    }

    /// The speaker's configuration: the brief's, plus the broker by address
    /// (not `localhost`, which may resolve to ::1 first) and no fades.
    private func config(port: UInt16, directory: BenchDirectory) -> String {
        """
        {"device":{"id":"bench"},"board":{"kind":"simulated"},\
        "audio":{"device":"file:'\(directory.file("out.raw"))',raw","fadeMs":0},\
        "mqtt":{"host":"127.0.0.1","port":\(port)},"stateDirectory":"\(directory.file("state"))",\
        "inputs":{"encoder":{"acceleration":false}}}
        """
    }

    /// Samples `VmRSS` ten times, 100 ms apart (the wait is on the speaker's
    /// exit, so a crash ends it early), and reports the peak as `rss_playing_kb`.
    private func residentMemory(of speaker: ChildProcess, report: BenchReport) {
        var readings: [Int] = []
        for _ in 0..<10 {
            if let kb = ResidentMemory.kilobytes(pid: speaker.pid) { readings.append(kb) }
            if speaker.waitForExit(timeout: 0.1) != nil { break }
        }
        guard let peak = readings.max() else {
            report.note("rss: could not read /proc/\(speaker.pid)/status")
            return
        }
        report.metric("rss_playing_kb", Double(peak), unit: "kB")
        report.note("rss while playing (kB): \(readings.map(String.init).joined(separator: " "))")
    }
}
