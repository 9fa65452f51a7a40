// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerProtocol
import Testing
import TestSupport

/// A FIFO where `state.json`, `revision` or the config file should be must
/// not block start-up or a SIGHUP reload (nor keep SIGTERM from being obeyed):
/// each is refused at once with a message naming it.
@Suite(.serialized) struct HostileFilesTests {
    @Test func fifosAtStateJSONAndRevisionAreRefusedAndTheSpeakerRunsWithSessionWithheld() throws {
        let broker = try TestBroker()
        let peer = try TestPeer(port: broker.port)
        try peer.connect()
        try peer.subscribe("ambient-speaker/fifo/#")
        let daemon = try Daemon(brokerPort: broker.port, deviceID: "fifo")
        #expect(mkdir(daemon.stateDirectory, 0o755) == 0)
        #expect(mkfifo(daemon.statePath, 0o600) == 0)
        #expect(mkfifo(daemon.stateDirectory + "/revision", 0o600) == 0)
        let notify = try NotifyListener(path: daemon.directory + "/notify.sock")
        try daemon.start(environment: [notify.environment])
        let root = daemon.topicRoot
        try #require(peer.waitForMessage(topic: "\(root)/availability", timeout: 20) { $0.payloadString == "online" } != nil,
                     "start-up blocked:\n\(daemon.log)")
        #expect(daemon.log.contains("state.json (refused: a FIFO, not a regular file)"), "\(daemon.log)")
        #expect(daemon.log.contains("revision): refused: a FIFO, not a regular file"), "\(daemon.log)")
        let device = try JSONParser().parse(peer.messages(on: "\(root)/device").last?.payload ?? [])
        #expect(device["problem"]?.stringValue?.contains("a FIFO, not a regular file") == true, "\(device.jsonText)")
        #expect(peer.messages(on: "\(root)/session").isEmpty, "no base to count revisions from: session withheld")
        #expect(notify.wait(timeout: 10) { $0.contains("STATUS=") && $0.contains("session NOT published") } != nil,
                "systemd STATUS= says why")
        let started = Monotonic.nanoseconds()
        daemon.process?.send(SIGTERM)
        #expect(daemon.process?.waitForExit(timeout: 10) == 0)
        print("fifo state files: SIGTERM to exit \((Monotonic.nanoseconds() - started) / 1_000_000) ms")
    }

    @Test func aFIFOAsTheConfigFileFailsStartUpAtOnceAndAReloadKeepsRunning() throws {
        let directory = try Files.makeTemporaryDirectory("/tmp/speaker-fifo-XXXXXX")
        let fifo = directory + "/config.json"
        #expect(mkfifo(fifo, 0o600) == 0)
        let child = try ChildProcess(executable: try SpeakerProcess.binaryPath(), arguments: ["run", "--config", fifo],
                                     logPath: directory + "/log")
        #expect(child.waitForExit(timeout: 10) == 1, "a bad configuration exits 1 (and must not block)")
        #expect(((try? Files.readText(directory + "/log")) ?? "").contains("a FIFO, not a regular file"))

        let broker = try TestBroker()
        let daemon = try Daemon(brokerPort: broker.port, deviceID: "fifohup")
        try daemon.start()
        #expect(daemon.waitForLog("connected to"), "\(daemon.log)")
        #expect(unlink(daemon.configPath) == 0 && mkfifo(daemon.configPath, 0o600) == 0)
        daemon.process?.send(SIGHUP)
        #expect(daemon.waitForLog("is invalid, keeping the running configuration"), "\(daemon.log)")
        #expect(daemon.log.contains("a FIFO, not a regular file"))
        #expect(try daemon.control("press playPause").hasPrefix("ok"), "the loop still runs")
        daemon.process?.send(SIGTERM)
        #expect(daemon.process?.waitForExit(timeout: 10) == 0, "SIGTERM is still obeyed")
    }

    /// A `revision` file near 2^64, or out of range, never traps at start.
    @Test(arguments: ["18446744073709551615", "18446744073709551000", "9007199254740991", "18446744073709551616", "-5"])
    func aRevisionFileAtTheTopOrOutOfRangeNeverTraps(stored: String) throws {
        let broker = try TestBroker()
        let peer = try TestPeer(port: broker.port)
        try peer.connect()
        try peer.subscribe("ambient-speaker/top/#")
        let daemon = try Daemon(brokerPort: broker.port, deviceID: "top")
        #expect(mkdir(daemon.stateDirectory, 0o755) == 0)
        try Files.writeText(daemon.stateDirectory + "/revision", stored + "\n")
        try daemon.start()
        let root = daemon.topicRoot
        try #require(peer.waitForMessage(topic: "\(root)/availability", timeout: 20) { $0.payloadString == "online" } != nil,
                     "never online:\n\(daemon.log)")
        let device = try JSONParser().parse(peer.messages(on: "\(root)/device").last?.payload ?? [])
        let problem = device["problem"]?.stringValue ?? ""
        #expect(problem.contains("exhausted") || problem.contains("does not hold a revision number"), "\(device.jsonText)")
        #expect(peer.messages(on: "\(root)/session").isEmpty)
        #expect(try daemon.control("press playPause").hasPrefix("ok"))
        daemon.process?.send(SIGTERM)
        #expect(daemon.process?.waitForExit(timeout: 10) == 0, "\(daemon.log.suffix(1500))")
    }
}
