// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
@testable import MQTTLink
import SpeakerCore
import SpeakerSystem
import Testing
import TestSupport

/// A real libmosquitto against a hostile broker (a CONNACK with an invalid
/// property, a packet over the maximum size, a second client with the same
/// id, failing library calls) and the named cause of every way of not being
/// connected.
@Suite struct HostileBrokerTests {
    /// A link that retries within milliseconds, for fake brokers.
    static func fastLink(port: UInt16, clientID: String = "ambient-speaker-test",
                         configure: (inout MQTTSettings) -> Void = { _ in }) throws -> LinkHarness {
        try LinkHarness(port: port, clientID: clientID, will: false) {
            $0.reconnectMinSeconds = 0.001
            $0.reconnectMaxSeconds = 0.004
            configure(&$0)
        }
    }

    @Test func row2_aConnackWithAnInvalidPropertyIsAProblemNotACrash() throws {
        // libmosquitto 2.0.11 aborted here (log__printf: Assertion 'mosq' failed).
        let broker = try FakeBroker { index, _ in
            .send(index == 0 ? HostilePackets.invalidPropertyConnack : HostilePackets.validConnack)
        }
        let speaker = try Self.fastLink(port: broker.port)
        try speaker.link.start()
        let problem = speaker.problem(timeout: 10)
        #expect(problem?.kind == .malformed, "\(String(describing: problem))")
        #expect(problem?.detail == "malformed packet from the broker")
        #expect(speaker.connected(timeout: 10) != nil, "the link goes on and connects to a sane answer")
        speaker.shutdown(timeoutMs: 500)
    }

    @Test func hostileBrokerSeededRun() throws {
        // The short in-process version of scripts/hostile-broker (which sends ≥ 10,000).
        let total = 300
        let progress = Monitor((generator: HostilePackets(seed: 11), sent: 0, shapes: Set<String>()))
        // A generous linger: under qemu-user (scripts/test-arm64) the emulated
        // client needed more than 5 s to close 2 of 300 connections; a client
        // that never closes still fails the lingering check below.
        let broker = try FakeBroker(lingerSeconds: 20) { _, _ in
            progress.update { p in
                guard p.sent < total else { return .send(HostilePackets.validConnack) }
                let packet = p.generator.next()
                p.sent += 1
                p.shapes.insert(packet.shape)
                return .send(packet.bytes)
            }
        }
        let speaker = try Self.fastLink(port: broker.port)
        try speaker.link.start()
        // Pumped like the main loop (every attempt ends in an event): once
        // connected, the link reads the socket only inside drainEvents.
        let reached = { broker.counts.connections >= total + 1 }
        #expect(speaker.next(timeout: 120, where: { _ in reached() }) != nil || reached(), "stalled at \(broker.counts)")
        #expect(speaker.next(timeout: 20, where: { _ in progress.read { $0.sent } >= total && speaker.link.isConnected }) != nil
                || speaker.link.isConnected, "the link connects after the storm")
        speaker.shutdown(timeoutMs: 500)
        #expect(broker.counts.clientsThatLingered == 0)
        #expect(progress.read { $0.shapes.count } > 150)
    }

    @Test func row3_theBrokerNeverSendsTheSpeakerAPacketOverItsMaximumPacketSize() throws {
        let broker = try TestBroker()
        let (speaker, peer) = try LinkHarness.online(on: broker)
        #expect(speaker.link.settings.maximumPacketSize == 65_536)
        try peer.publish(topic: LinkHarness.command, payload: [UInt8](repeating: 0x41, count: 200_000))
        try peer.publish(topic: LinkHarness.command, payload: [UInt8](repeating: 0x42, count: 5_000))
        let delivered = speaker.message(on: LinkHarness.command)
        #expect(delivered?.payload.count == 5_000, "the 200 kB command is dropped by the broker, the 5 kB one arrives")
        #expect(speaker.message(on: LinkHarness.command, timeout: 0.5) == nil)
        speaker.shutdown()
    }

    @Test func row9_aSecondClientWithTheSameIDEndsTheFirstsConnection() throws {
        // mosquitto 2.0.11 closes the first connection without flushing its
        // DISCONNECT 142 (Session taken over), so the link sees a plain loss;
        // the core infers the takeover from repeated short connections
        // (BrokerHealthTests, and the two-speaker end-to-end test).
        let broker = try TestBroker()
        let first = try LinkHarness(port: broker.port, clientID: "ambient-speaker-twin", will: false)
        try first.link.start()
        #expect(first.connected() != nil)
        let second = try LinkHarness(port: broker.port, clientID: "ambient-speaker-twin", will: false)
        try second.link.start()
        #expect(second.connected() != nil)
        #expect(first.disconnected(timeout: 10) != nil)
        let problem = first.problem(timeout: 10)
        #expect(problem?.kind == .lost || problem?.kind == .takenOver, "\(String(describing: problem))")
        #expect(problem?.detail.contains("No such file") == false)
        second.shutdown(timeoutMs: 500)
        first.shutdown(timeoutMs: 500)
    }

    @Test func row12_libraryErrorsAreNamedWithTheFailingCallsErrno() {
        #expect(MQTTReasons.text(for: 14 /* MOSQ_ERR_ERRNO */, savedErrno: ECONNRESET) == "Connection reset by peer")
        #expect(MQTTReasons.text(for: 21 /* MOSQ_ERR_MALFORMED_PACKET */) == "malformed packet from the broker")
        #expect(MQTTReasons.text(for: 1 /* MOSQ_ERR_NOMEM */) == "out of memory")
        #expect(MQTTReasons.text(for: 7 /* MOSQ_ERR_CONN_LOST */) == "the connection was closed")
        #expect(MQTTError.text(for: 2 /* MOSQ_ERR_PROTOCOL */).hasPrefix("protocol error"))
        #expect(MQTTReasons.lossProblem(code: 142, savedErrno: 0).kind == .takenOver)
        #expect(MQTTReasons.lossProblem(code: 7, savedErrno: ENOENT).detail == "the connection was closed",
                "a stale errno never leaks into a code that is not MOSQ_ERR_ERRNO")
    }

    // MARK: Each cause of not being connected, against a real mosquitto where one can produce it.

    @Test func row13_aClosedPortIsRefused() throws {
        let port = try FreePort.find()  // nothing listens there
        let speaker = try LinkHarness(port: port)
        try speaker.link.start()
        let problem = speaker.problem(timeout: 10)
        #expect(problem == ConnectionProblem(kind: .refused, detail: "Connection refused"))
        #expect(speaker.disconnected(timeout: 0.2) == nil, "never connected: no misleading disconnect")
        speaker.shutdown(timeoutMs: 300)
    }

    @Test func row13_anUnknownHostIsANameResolutionProblem() throws {
        let speaker = try LinkHarness(port: 1883) { $0.host = "no-such-broker.invalid" }
        try speaker.link.start()
        let problem = speaker.problem(timeout: 30)
        #expect(problem?.kind == .nameResolution, "\(String(describing: problem))")
        speaker.shutdown(timeoutMs: 300)
    }

    @Test func row13_aCertificateFromAnotherCAIsATLSProblemWithTheLibrarysReason() throws {
        let pki = try TestCertificates()
        let broker = try TestBroker(secondListener: ["cafile \(pki.caFile)", "certfile \(pki.serverCert)", "keyfile \(pki.serverKey)"])
        let speaker = try LinkHarness(port: try #require(broker.secondPort), tls: MQTTTLS(caFile: pki.otherCAFile))
        try speaker.link.start()
        // The first attempt may find the TLS listener not yet listening (refused); wait for the TLS verdict.
        let problem = speaker.problem(.tls, timeout: 10)
        #expect(problem?.kind == .tls, "\(String(describing: problem))")
        #expect(problem?.detail.contains("certificate verify failed") == true, "\(String(describing: problem))")
        speaker.shutdown(timeoutMs: 300)
    }

    @Test func row13_aWrongPasswordIsARejectedLoginInWordsAndBacksOff() throws {
        var template = Array("/tmp/test-auth-XXXXXX".utf8CString)
        let dir = try #require(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!).map { String(cString: $0) } })
        defer { _ = try? runShell("rm -rf '\(dir)'", logPath: "/dev/null") }
        try runShell("mosquitto_passwd -b -c '\(dir)/passwd' speaker right && chmod 644 '\(dir)/passwd'", logPath: dir + "/passwd.log")
        let broker = try TestBroker(extraConfig: ["password_file \(dir)/passwd"], anonymous: false)
        let speaker = try LinkHarness(port: broker.port, username: "speaker", password: "wrong")
        try speaker.link.start()
        let problem = speaker.problem(timeout: 10)
        #expect(problem?.kind == .loginRejected, "\(String(describing: problem))")
        #expect(problem?.detail == "Not authorized (135)" || problem?.detail == "Bad user name or password (134)",
                "\(String(describing: problem))")
        #expect(speaker.disconnected(timeout: 0.2) == nil, "a refused login is not a disconnect")
        speaker.shutdown(timeoutMs: 300)
    }

    @Test func row13_aRejectedLoginIsRetriedOnTheBackoffSchedule() throws {
        // 135 Not authorized to every CONNECT: without backoff the link would
        // reconnect hundreds of times a second; with 0.5 s doubling it makes
        // at most a handful of attempts in 3 s (fewer on a slow machine).
        let broker = try FakeBroker { _, _ in .send([0x20, 0x03, 0x00, 0x87, 0x00]) }
        let speaker = try LinkHarness(port: broker.port, will: false)
        try speaker.link.start()
        #expect(speaker.problem(.loginRejected, timeout: 10)?.detail == "Not authorized (135)")
        _ = broker.waitForConnections(1_000, timeout: 3)
        #expect(broker.counts.connections <= 6, "\(broker.counts.connections) attempts in 3 s")
        speaker.shutdown(timeoutMs: 300)
    }

    @Test func row13_aBrokerThatSpeaksNeitherV5Nor311IsAProtocolMismatch() throws {
        let broker = try FakeBroker { _, connect in
            // Protocol level is byte 8 of a CONNECT with a one-byte remaining length ("MQTT" name).
            let level = connect.count > 8 ? connect[8] : 0
            return .send(level == 5 ? [0x20, 0x03, 0x00, 0x84, 0x00] : [0x20, 0x02, 0x00, 0x01])
        }
        let speaker = try LinkHarness(port: broker.port, will: false)
        try speaker.link.start()
        let problem = speaker.problem(timeout: 10)
        #expect(problem?.kind == .protocolMismatch, "\(String(describing: problem))")
        #expect(speaker.link.protocolVersion == 4, "it tried 3.1.1 before giving that reason")
        speaker.shutdown(timeoutMs: 300)
    }

    @Test func row13_aBrokerThatNeverAnswersIsATimeout() throws {
        let broker = try FakeBroker { _, _ in .silence }
        let speaker = try LinkHarness(port: broker.port, will: false) { $0.keepaliveSeconds = 5 }
        try speaker.link.start()
        let problem = speaker.problem(timeout: 30)
        #expect(problem?.kind == .timeout, "\(String(describing: problem))")
        speaker.shutdown(timeoutMs: 300)
    }
}
