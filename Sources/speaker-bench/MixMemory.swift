// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerSystem
import TestSupport

/// What the speaker keeps resident while playing a 4-layer mix (pink and
/// rain generated, two 120-s 44.1 kHz mono FLACs streamed), as
/// `FileSoundMemory` measures one sound: `/proc/<pid>/smaps_rollup` every
/// 5 s over 70 s of playing (the speaker pages out its start-up code 10 s
/// after it is ready), Pss at the end and private dirty's change over the
/// last 60 s, beside one file sound measured the same way in the same run.
/// Build the speaker with `--static-swift-stdlib` for the shipped figure.
struct MixMemory {
    var speakerExecutable: String

    func run(report: BenchReport) throws {
        let sox = try FileSoundCost.tool("sox")
        let dir = try BenchDirectory()
        defer { dir.remove() }
        try dir.makeDirectory("sounds")
        try dir.makeDirectory("state")
        try FileSoundMemory.synthesizeFLACs([("streama", 120, "pinknoise"), ("streamb", 120, "brownnoise")], sox: sox, in: dir)
        let broker = try TestBroker()
        defer { broker.stop() }
        try dir.write("config.json", text: """
            {"device":{"id":"bench"},"board":{"kind":"simulated"},\
            "audio":{"device":"null","soundsDirectory":"\(dir.file("sounds"))"},\
            "mqtt":{"host":"127.0.0.1","port":\(broker.port)},"session":{"resumeOnBoot":false},\
            "stateDirectory":"\(dir.file("state"))",\
            "mixes":[{"id":"mix4","name":"Four","layers":[{"soundID":"pink","level":0.9},{"soundID":"rain","level":0.8},\
            {"soundID":"streama","level":0.7},{"soundID":"streamb","level":0.6}]}]}
            """)
        let peer = try TestPeer(port: broker.port)
        defer { peer.disconnect() }
        try peer.connect()
        try peer.subscribe("ambient-speaker/bench/session")
        for sound in ["streama", "mix4"] {
            let samples = try FileSoundMemory.samplePlaying(sound, speakerExecutable: speakerExecutable, peer: peer, dir: dir, count: 14)
            guard let last = samples.last, samples.count == 14 else { throw BenchError("could not read smaps_rollup") }
            let name = sound == "mix4" ? "playing_mix4" : "playing_one_streamed_file"
            report.metric("rss_\(name)_kb", Double(last["Rss"] ?? 0), unit: "kB")
            report.metric("pss_\(name)_kb", Double(last["Pss"] ?? 0), unit: "kB")
            report.metric("private_dirty_\(name)_kb", Double(last["Private_Dirty"] ?? 0), unit: "kB")
            let before = samples[1]["Private_Dirty"] ?? 0  // 10 s in: after the page-out
            report.metric("private_dirty_\(name)_growth_last_60s_kb", Double((last["Private_Dirty"] ?? 0) - before), unit: "kB")
            report.note("\(sound): every 5 s, Rss/Pss/Private_Dirty kB: "
                + samples.map { "\($0["Rss"] ?? 0)/\($0["Pss"] ?? 0)/\($0["Private_Dirty"] ?? 0)" }.joined(separator: " "))
        }
        report.metric("pss_playing_mix4_goal_kb", 8 * 1024, unit: "kB")
    }
}
