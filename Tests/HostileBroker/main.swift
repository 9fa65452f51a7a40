// SPDX-License-Identifier: Apache-2.0
// hostile-broker: a real MQTTLink (the speaker's libmosquitto client, as
// linked into the speaker) against a FakeBroker that answers every connection
// with one seeded hostile packet (HostilePackets), reconnecting within
// milliseconds, then checks that the link still connects to a sane answer.
//
//   hostile-broker SEED PACKETS LAST_PACKET_FILE SHAPES_FILE
//
// Before each packet is sent its index, shape and bytes (hex) are written to
// LAST_PACKET_FILE, so when libmosquitto kills the process the caller
// (scripts/hostile-broker) knows which packet did it. Every shape sent is
// written to SHAPES_FILE at the end. Prints one summary line; exits 0 when all
// packets were sent and the link reconnected afterwards, 1 otherwise (a
// crash shows as death by signal).
#if canImport(Glibc)
import Glibc
#endif
import MQTTLink
import SpeakerSystem
import TestSupport

/// The generator and what was sent, shared with the fake broker's thread.
struct Progress {
    var generator: HostilePackets
    var sent = 0
    var shapes: Set<String> = []
    var finalConnackSent = false
}

func writeFile(_ path: String, _ text: String) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { return }
    _ = Array(text.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
}

func residentPeakKiB() -> Int {
    let fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return -1 }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: 8192)
    let n = read(fd, &buffer, buffer.count)
    guard n > 0 else { return -1 }
    let text = String(decoding: buffer[0..<n], as: UTF8.self)
    guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return -1 }
    return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
}

let arguments = CommandLine.arguments
guard arguments.count == 5, let seed = UInt64(arguments[1]), let total = Int(arguments[2]), total > 0 else {
    print("usage: hostile-broker SEED PACKETS LAST_PACKET_FILE SHAPES_FILE")
    exit(2)
}
let lastPacketFile = arguments[3]
let shapesFile = arguments[4]
let progress = Monitor(Progress(generator: HostilePackets(seed: seed)))

let broker = try FakeBroker(lingerSeconds: 10) { _, _ in
    progress.update { p in
        guard p.sent < total else {
            p.finalConnackSent = true
            return .send(HostilePackets.validConnack)
        }
        // The known killer first (a CONNACK with an invalid property), so every run re-checks it.
        let packet = p.sent == 0 ? HostilePackets.Packet(bytes: HostilePackets.invalidPropertyConnack,
                                                          shape: "CONNACK/std/none/p[0]/tiny")
                                 : p.generator.next()
        writeFile(lastPacketFile, "\(p.sent) \(packet.shape) \(packet.bytes.map { String($0, radix: 16) }.joined(separator: " "))\n")
        p.sent += 1
        p.shapes.insert(packet.shape)
        return .send(packet.bytes)
    }
}

let settings = MQTTSettings(host: "127.0.0.1", port: Int(broker.port), clientID: "ambient-speaker-hostile",
                            keepaliveSeconds: 5, subscriptions: ["ambient-speaker/hostile/command"],
                            reconnectMinSeconds: 0.001, reconnectMaxSeconds: 0.004)
let link = try MQTTLink(settings: settings, logger: Logger(component: "mqtt", threshold: .error, backend: StderrLogBackend()),
                        clock: { MonotonicClock.now() })
try link.start()

var reconnected = false
var problems = 0
var lastConnections = 0
var lastProgressAt = Monotonic.nanoseconds()
let stallLimit: UInt64 = 30_000_000_000
while !reconnected {
    var entry = pollfd(fd: link.eventFD, events: Int16(POLLIN), revents: 0)
    _ = poll(&entry, 1, 1000)
    let finalSent = progress.read { $0.finalConnackSent }
    for event in link.drainEvents() {
        switch event {
        case .connected where finalSent: reconnected = true
        case .problem: problems += 1
        default: break
        }
    }
    let connections = broker.counts.connections
    if connections != lastConnections {
        lastConnections = connections
        lastProgressAt = Monotonic.nanoseconds()
    } else if Monotonic.nanoseconds() - lastProgressAt > stallLimit {
        break
    }
}
link.shutdown(finalPublish: Optional<(topic: String, payload: [UInt8], retain: Bool)>.none, timeoutMs: 500)
let counts = broker.counts
broker.stop()
let (sent, shapes) = progress.read { ($0.sent, $0.shapes) }
writeFile(shapesFile, shapes.sorted().joined(separator: "\n") + "\n")
print("hostile-broker seed \(seed): \(sent) packets sent, \(shapes.count) distinct shapes, \(problems) problems reported, "
      + "\(counts.clientsThatLingered) lingering connections, peak RSS \(residentPeakKiB()) KiB, "
      + "reconnected afterwards: \(reconnected ? "yes" : "NO")")
exit(reconnected && sent == total && counts.clientsThatLingered == 0 ? 0 : 1)
