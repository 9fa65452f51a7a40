// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerSystem
import TestSupport

/// What the speaker keeps resident while playing a file sound, from
/// `/proc/<pid>/smaps_rollup`: Rss, Pss and private dirty, sampled every 5 s
/// over 40 s of playing (the speaker pages out its start-up code 10 s after
/// it is ready), for a 10-minute mono FLAC (streamed) and a 20-s one (cached
/// as a loop), each beside the anchor: shairport-sync's 7.8 MB (a given
/// figure, not measured by this bench: it needs an AirPlay sender to
/// play). Build the speaker with `--static-swift-stdlib` for the figure of
/// the shipped build. Pss divides pages shared with other processes (libc, and
/// on a busy build host other programs' libraries), so Rss is printed too.
struct FileSoundMemory {
    var speakerExecutable: String
    /// The anchor, in kB.
    static let shairportSyncKB = 7_800

    func run(report: BenchReport) throws {
        let sox = try FileSoundCost.tool("sox")
        let dir = try BenchDirectory()
        defer { dir.remove() }
        try dir.makeDirectory("sounds")
        try dir.makeDirectory("state")
        try Self.synthesizeFLACs([("long", 600, "pinknoise"), ("short", 20, "pinknoise")], sox: sox, in: dir)
        let broker = try TestBroker()
        defer { broker.stop() }
        try dir.write("config.json", text: """
            {"device":{"id":"bench"},"board":{"kind":"simulated"},\
            "audio":{"device":"null","soundsDirectory":"\(dir.file("sounds"))"},\
            "mqtt":{"host":"127.0.0.1","port":\(broker.port)},"session":{"resumeOnBoot":false},\
            "stateDirectory":"\(dir.file("state"))"}
            """)
        let peer = try TestPeer(port: broker.port)
        defer { peer.disconnect() }
        try peer.connect()
        try peer.subscribe("ambient-speaker/bench/session")
        report.metric("anchor_shairport_sync_rss_kb", Double(Self.shairportSyncKB), unit: "kB")
        for sound in ["long", "short"] {
            let samples = try Self.samplePlaying(sound, speakerExecutable: speakerExecutable, peer: peer, dir: dir, count: 8)
            guard let last = samples.last, samples.count >= 4 else { throw BenchError("could not read smaps_rollup") }
            let name = "playing_\(sound)_file"
            report.metric("rss_\(name)_kb", Double(last["Rss"] ?? 0), unit: "kB")
            report.metric("pss_\(name)_kb", Double(last["Pss"] ?? 0), unit: "kB")
            report.metric("private_dirty_\(name)_kb", Double(last["Private_Dirty"] ?? 0), unit: "kB")
            // Flat over time: the change over the last 20 s (after the page-out and any cache fill).
            let before = samples[samples.count - 5]["Private_Dirty"] ?? 0
            report.metric("private_dirty_\(name)_growth_last_20s_kb", Double((last["Private_Dirty"] ?? 0) - before), unit: "kB")
            report.note("\(sound): every 5 s, Rss/Pss/Private_Dirty kB: "
                + samples.map { "\($0["Rss"] ?? 0)/\($0["Pss"] ?? 0)/\($0["Private_Dirty"] ?? 0)" }.joined(separator: " "))
        }
    }

    /// Starts the speaker with `dir`'s `config.json` (device `bench`), selects
    /// `sound` over MQTT through `peer` (subscribed to its session), waits
    /// until it plays, and reads `smaps_rollup` every 5 s, `count` times;
    /// the speaker is stopped afterwards.
    /// Writes `sounds/NAME.flac` in `dir` for each entry: 44.1 kHz mono 16-bit
    /// noise of `seconds`, made by sox's `synth` (`pinknoise`, `brownnoise`).
    static func synthesizeFLACs(_ files: [(name: String, seconds: Int, synth: String)], sox: String,
                                in dir: BenchDirectory) throws {
        for file in files {
            let child = try ChildProcess(executable: sox, arguments: ["-n", "-r", "44100", "-c", "1", "-b", "16",
                                         dir.file("sounds/\(file.name).flac"), "synth", String(file.seconds), file.synth,
                                         "vol", "0.5"],
                                         logPath: dir.file("sox.log"))
            guard child.waitForExit(timeout: 120) == 0 else { throw BenchError("sox could not make \(file.name).flac") }
        }
    }

    static func samplePlaying(_ sound: String, speakerExecutable: String, peer: TestPeer, dir: BenchDirectory,
                              count: Int) throws -> [[String: Int]] {
        let speaker = try ChildProcess(executable: speakerExecutable, arguments: ["run", "--config", dir.file("config.json")],
                                       logPath: dir.file("speaker.log"))
        defer {
            speaker.send(SIGTERM)
            if speaker.waitForExit(timeout: 5) == nil { speaker.send(SIGKILL) }
        }
        guard peer.waitForMessage(topic: "ambient-speaker/bench/session", timeout: 20) != nil else {
            throw BenchError("no session from the speaker; its log:\n" + dir.tail("speaker.log"))
        }
        peer.clear()
        try peer.publish(topic: "ambient-speaker/bench/command",
                         string: "{\"id\":\"m-\(sound)\",\"action\":\"select\",\"soundID\":\"\(sound)\"}")
        let playing = peer.wait(timeout: 10) { messages in
            messages.first { $0.payloadString.contains("\"soundID\":\"\(sound)\"") && $0.payloadString.contains("\"isPlaying\":true") }
        }
        guard playing != nil else { throw BenchError("the speaker did not play \(sound); its log:\n" + dir.tail("speaker.log")) }
        var samples: [[String: Int]] = []
        for _ in 0..<count {
            if speaker.waitForExit(timeout: 5) != nil { throw BenchError("the speaker exited while playing \(sound)") }
            if let s = rollup(pid: speaker.pid) { samples.append(s) }
        }
        return samples
    }

    /// `Rss`, `Pss`, `Private_Dirty`… (kB) from `/proc/<pid>/smaps_rollup`.
    static func rollup(pid: Int32) -> [String: Int]? {
        guard let text = try? FileIO.readText(path: "/proc/\(pid)/smaps_rollup", maxBytes: 16_384) else { return nil }
        var values: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(whereSeparator: { $0 == " " || $0 == ":" })
            if parts.count >= 2, let v = Int(parts[1]) { values[String(parts[0])] = v }
        }
        return values
    }
}
