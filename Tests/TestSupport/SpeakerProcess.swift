// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

/// The built `ambient-speaker` binary running `run` with a simulated board,
/// a file pcm and a private state directory, for end-to-end tests and
/// benchmarks. Drives the board through its control socket.
public final class SpeakerProcess: @unchecked Sendable {
    public let directory: String
    public let deviceID: String
    public let process: ChildProcess
    public var controlSocket: String { directory + "/control.sock" }
    public var pcmPath: String { directory + "/out.raw" }
    public var logPath: String { directory + "/speaker.log" }
    public var configPath: String { directory + "/config.json" }
    public var log: String { (try? readText(logPath)) ?? "" }
    public var topicRoot: String { "ambient-speaker/\(deviceID)" }

    /// The speaker binary: `$AMBIENT_SPEAKER_BIN`, else `ambient-speaker` next to
    /// the running test/benchmark executable (SwiftPM puts them in one bin dir).
    public static func binaryPath() throws -> String {
        if let env = getenv("AMBIENT_SPEAKER_BIN") {
            let path = String(cString: env)
            guard access(path, X_OK) == 0 else {
                throw TestSupportError("AMBIENT_SPEAKER_BIN", "\(path) is not an executable file (\(String(cString: strerror(errno))))")
            }
            return path
        }
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { throw TestSupportError("readlink(/proc/self/exe)", String(cString: strerror(errno))) }
        var dir = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // Test bundles live in <bin>/<name>.xctest; executables directly in <bin>.
        while let slash = dir.lastIndex(of: "/") {
            dir = String(dir[..<slash])
            let candidate = dir + "/ambient-speaker"
            if access(candidate, X_OK) == 0 { return candidate }
            if dir.isEmpty { break }
        }
        throw TestSupportError("ambient-speaker binary", "not found next to the test executable; build it first (swift build) or set AMBIENT_SPEAKER_BIN")
    }

    /// Writes a config (`extraConfig` members are merged in at the top level
    /// as raw JSON text, e.g. `"volume":{"mode":"gpio-step"}`; `mqttConfig`
    /// members inside `mqtt`, e.g. `"homeAssistant":{"enabled":false}`;
    /// `audioConfig` members inside `audio`, e.g. `"soundsDirectory":"/tmp/s"`) and
    /// starts the speaker. `audioDevice` replaces the default file pcm
    /// (`pcmPath`) with any alsa-lib pcm name. The temporary directory is
    /// removed on deinit (a caller-supplied `stateDirectory` is left alone).
    /// `environment`: `KEY=value` entries added to the speaker's environment.
    public init(brokerPort: UInt16, deviceID: String = "e2e", extraConfig: String = "", stateDirectory: String? = nil,
                fadeMs: Int = 100, crossfadeMs: Int = 200, logLevel: String = "debug", mqttConfig: String = "",
                audioDevice: String? = nil, audioConfig: String = "", environment: [String] = []) throws {
        directory = try makeTemporaryDirectory(prefix: "speaker-e2e")
        self.deviceID = deviceID
        let state = stateDirectory ?? directory + "/state"
        let pcm = audioDevice ?? "file:'\(directory)/out.raw',raw"
        var config = """
        {"device":{"id":"\(deviceID)"},"board":{"kind":"simulated","controlSocket":"\(directory)/control.sock"},
         "audio":{"device":"\(pcm)","fadeMs":\(fadeMs),"crossfadeMs":\(crossfadeMs)\(audioConfig.isEmpty ? "" : "," + audioConfig)},
         "mqtt":{"host":"127.0.0.1","port":\(brokerPort)\(mqttConfig.isEmpty ? "" : "," + mqttConfig)},"stateDirectory":"\(state)"
        """
        if !extraConfig.isEmpty { config += ",\n " + extraConfig }
        config += "}\n"
        try writeText(directory + "/config.json", config)
        process = try ChildProcess(executable: try Self.binaryPath(), arguments: ["run", "--config", directory + "/config.json", "--log-level", logLevel],
                                   logPath: directory + "/speaker.log", environment: environment)
    }

    deinit {
        process.send(SIGKILL)
        _ = process.waitForExit(timeout: 5)
        _ = try? runShell("rm -rf '\(directory)'", logPath: "/dev/null")
    }

    /// Sends one line to the board's control socket and returns the reply line
    /// (`ok`, `error: …`, `up=N down=M`). Waits up to `timeout` for the socket to appear
    /// (a bound on start-up, not a timing check: an emulated speaker on a loaded host took over 5 s).
    public func control(_ line: String, timeout: Double = 20) throws -> String {
        try ControlSocket.send(line, to: controlSocket, timeout: timeout)
    }

    /// The S16 stereo samples written to the file pcm so far.
    public func pcmSamples() -> [Int16] {
        guard let bytes = try? readBytes(pcmPath) else { return [] }
        return bytes.withUnsafeBytes { raw in Array(raw.bindMemory(to: Int16.self)) }
    }
}

func readBytes(_ path: String) throws -> [UInt8] {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw TestSupportError("open(\(path))", String(cString: strerror(errno))) }
    defer { close(fd) }
    var out: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n <= 0 { return out }
        out.append(contentsOf: chunk[0..<n])
    }
}

func readText(_ path: String) throws -> String { String(decoding: try readBytes(path), as: UTF8.self) }

func writeText(_ path: String, _ text: String) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw TestSupportError("open(\(path))", String(cString: strerror(errno))) }
    defer { close(fd) }
    let bytes = Array(text.utf8)
    guard bytes.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == bytes.count else {
        throw TestSupportError("write(\(path))", String(cString: strerror(errno)))
    }
}
