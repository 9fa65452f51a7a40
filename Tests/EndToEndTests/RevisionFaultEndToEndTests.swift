// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerProtocol
import Testing
import TestSupport

/// Revisions under a failing disk, end to end: the built speaker with its
/// state directory on a real, tiny tmpfs made read-only or filled up. A
/// subscriber must never see a `session` revision that is not greater than
/// every one it saw before — across the fault, the recovery and a kill -9
/// restart. Needs root (mount); CI runs as root.
@Suite(.serialized) struct RevisionFaultEndToEndTests {
    static func parse(_ m: ReceivedMessage?) -> JSONValue? { m.flatMap { try? JSONParser().parse($0.payload) } }

    /// The session revisions a subscriber saw, in order; a retained
    /// re-send of the same message (same revision, same bytes) is allowed.
    static func violations(_ sessions: [ReceivedMessage]) -> [String] {
        var last: (UInt64, [UInt8])?
        var found: [String] = []
        for m in sessions {
            guard let r = parse(m)?["revision"]?.numberValue.map({ UInt64($0) }) else { found.append("no revision"); continue }
            if let (lr, lp) = last {
                if r < lr || (r == lr && m.payload != lp) { found.append("\(r) after \(lr)") }
            }
            if last == nil || r > last!.0 { last = (r, m.payload) }
        }
        return found
    }

    static func revision(_ m: ReceivedMessage?) -> UInt64? { parse(m)?["revision"]?.numberValue.map { UInt64($0) } }

    @Test func aReadOnlyStateDirectoryWithholdsSessionUntilWritableAndARestartNeverRepeats() throws {
        let fs = try SmallFilesystem(kilobytes: 256)
        try fs.write("revision", "1000\n")
        try fs.setReadOnly(true)
        let broker = try TestBroker()
        let peer = try TestPeer(port: broker.port)
        try peer.connect()
        try peer.subscribe("ambient-speaker/e2e/#")
        var speaker: SpeakerProcess? = try SpeakerProcess(brokerPort: broker.port, stateDirectory: fs.path, logLevel: "info",
                                                          mqttConfig: #""homeAssistant":{"enabled":false}"#)
        let root = speaker!.topicRoot
        try #require(peer.waitForMessage(topic: "\(root)/availability", timeout: 60) { $0.payloadString == "online" } != nil, "\(speaker!.log)")
        let device = Self.parse(peer.messages(on: "\(root)/device").last)
        #expect(device?["problem"]?.stringValue?.contains("Read-only file system") == true, "\(String(describing: device))")
        #expect(peer.messages(on: "\(root)/session").isEmpty, "no session without a durable reservation")
        #expect(speaker!.log.contains("session publishing stopped"), "\(speaker!.log)")
        try peer.publish(topic: "\(root)/command", string: #"{"id":"ro-1","action":"setVolume","level":0.9}"#)
        let refused = peer.waitForMessage(topic: "\(root)/command/result") { Self.parse($0)?["id"] == .string("ro-1") }
        #expect(Self.parse(refused)?["error"]?["code"] == .string("state-unavailable"))

        try fs.setReadOnly(false)
        let resumed = peer.waitForMessage(topic: "\(root)/session", timeout: Double(10)) { _ in true }
        #expect(Self.revision(resumed) == 1001, "continues above the stored reservation once it can reserve")
        #expect(Self.parse(peer.messages(on: "\(root)/device").last)?["problem"] == nil)
        #expect(speaker!.log.contains("session publishing resumed"))
        try peer.publish(topic: "\(root)/command", string: #"{"id":"ro-2","action":"setVolume","level":0.3}"#)
        let ok = peer.waitForMessage(topic: "\(root)/command/result") { Self.parse($0)?["id"] == .string("ro-2") }
        #expect(Self.parse(ok)?["ok"] == .bool(true))

        speaker!.process.send(SIGKILL)
        _ = speaker!.process.waitForExit(timeout: 5)
        speaker = try SpeakerProcess(brokerPort: broker.port, stateDirectory: fs.path, logLevel: "info",
                                     mqttConfig: #""homeAssistant":{"enabled":false}"#)
        _ = peer.waitForMessage(topic: "\(root)/session", timeout: 15) { Self.revision($0).map { $0 > 1002 } ?? false }
        let sessions = peer.messages(on: "\(root)/session")
        #expect(Self.violations(sessions).isEmpty, "\(Self.violations(sessions))")
        #expect((Self.revision(sessions.last) ?? 0) > 1002)
    }

    @Test func aFullStateDirectoryStopsAtTheReservationRefusesCommandsAndResumesAbove() throws {
        let fs = try SmallFilesystem(kilobytes: 256)
        try fs.write("revision", "1000\n")
        let broker = try TestBroker()
        let peer = try TestPeer(port: broker.port)
        try peer.connect()
        try peer.subscribe("ambient-speaker/e2e/#")
        let speaker = try SpeakerProcess(brokerPort: broker.port, stateDirectory: fs.path, logLevel: "info",
                                         mqttConfig: #""homeAssistant":{"enabled":false}"#)
        let root = speaker.topicRoot
        try #require(peer.waitForMessage(topic: "\(root)/session", timeout: 15) { _ in true } != nil, "\(speaker.log)")
        try fs.fill()
        // Batches of 100 commands, each batch answered before the next.
        var refusedAt: Int?
        var i = 0
        while refusedAt == nil && i < 1500 {
            for n in i..<(i + 100) {
                try peer.publish(topic: "\(root)/command", string: #"{"id":"full-\#(n)","action":"setVolume","level":0.\#(1 + n % 2)}"#)
            }
            i += 100
            let lastID = "full-\(i - 1)"
            // 30 s: a bound, not a timing check — under qemu-user (scripts/test-arm64)
            // a batch of 100 took 5–10 s, and once just over 10 s.
            try #require(peer.waitForMessage(topic: "\(root)/command/result", timeout: 30) { Self.parse($0)?["id"] == .string(lastID) } != nil,
                         "no result for \(lastID)\n\(speaker.log.suffix(2000))")
            let refused = peer.messages(on: "\(root)/command/result").compactMap { Self.parse($0) }.filter { $0["ok"] == .bool(false) }
            if let first = refused.first {
                #expect(refused.allSatisfy { $0["error"]?["code"] == .string("state-unavailable") })
                refusedAt = first["id"]?.stringValue.flatMap { Int($0.dropFirst(5)) }
            }
        }
        try #require(refusedAt != nil)
        let results = peer.messages(on: "\(root)/command/result").compactMap { Self.parse($0)?["id"]?.stringValue }
        #expect(results.count == i && Set(results).count == i, "every command got exactly one result")
        #expect(Self.revision(peer.messages(on: "\(root)/session").last) == 2000, "stops exactly at the durable reservation")
        #expect(speaker.log.contains("No space left on device"), "\(speaker.log.suffix(3000))")
        #expect(Self.parse(peer.messages(on: "\(root)/device").last)?["problem"]?.stringValue?.contains("No space left") == true)

        // Freed: within a retry (5 s) `device.problem` clears; nothing changed
        // since revision 2000 (the refused commands changed nothing), so the
        // next change is 2001.
        try fs.unfill()
        let cleared = peer.wait(timeout: 10) { all in
            Self.parse(all.last { $0.topic == "\(root)/device" }).flatMap { $0["problem"] == nil ? true : nil }
        }
        #expect(cleared == true, "\(speaker.log.suffix(3000))")
        try peer.publish(topic: "\(root)/command", string: #"{"id":"after","action":"setVolume","level":0.5}"#)
        let after = peer.waitForMessage(topic: "\(root)/command/result") { Self.parse($0)?["id"] == .string("after") }
        #expect(Self.parse(after)?["revision"] == .number(2001), "\(String(describing: after?.payloadString))\n\(speaker.log.suffix(1500))")
        speaker.process.send(SIGKILL)
        _ = speaker.process.waitForExit(timeout: 5)
        let again = try SpeakerProcess(brokerPort: broker.port, stateDirectory: fs.path, logLevel: "info",
                                       mqttConfig: #""homeAssistant":{"enabled":false}"#)
        _ = peer.waitForMessage(topic: "\(root)/session", timeout: 15) { Self.revision($0).map { $0 > 2001 } ?? false }
        let sessions = peer.messages(on: "\(root)/session")
        #expect(Self.violations(sessions).isEmpty, "\(Self.violations(sessions))")
        #expect((Self.revision(sessions.last) ?? 0) > 2001, "\(again.log.suffix(1000))")
        print("full state directory: \(i) commands, the first refused at \(refusedAt ?? -1); revisions \(Self.revision(sessions.first) ?? 0)…\(Self.revision(sessions.last) ?? 0), 0 repeats")
    }
}

/// A tmpfs of a few kilobytes at a fresh directory (root only): made
/// read-only, filled up and freed by the tests; unmounted on deinit.
final class SmallFilesystem {
    let path: String

    init(kilobytes: Int) throws {
        var template = Array("/tmp/speaker-smallfs-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!).map { String(cString: $0) } }) else {
            throw TestSupportError("mkdtemp", String(cString: strerror(errno)))
        }
        path = made
        try runShell("mount -t tmpfs -o size=\(kilobytes)k,mode=0755 tmpfs '\(path)'", logPath: "/dev/null")
    }

    deinit { _ = try? runShell("umount -l '\(path)' && rmdir '\(path)'", logPath: "/dev/null") }

    func write(_ name: String, _ text: String) throws {
        try runShell("printf '%s' '\(text)' > '\(path)/\(name)'", logPath: "/dev/null")
    }

    func setReadOnly(_ readOnly: Bool) throws {
        try runShell("mount -o remount,\(readOnly ? "ro" : "rw") '\(path)'", logPath: "/dev/null")
    }

    /// Fills every free block (dd stops at ENOSPC).
    func fill() throws { try runShell("dd if=/dev/zero of='\(path)/fill' bs=4k 2>/dev/null || true; sync", logPath: "/dev/null") }

    func unfill() throws { try runShell("rm -f '\(path)/fill'", logPath: "/dev/null") }
}
