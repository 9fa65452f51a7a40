// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import TestSupport

/// A scratch root for `ambient-speaker apply-settings`: the files of the SD
/// card image the applier reads (base config, zone files, hosts, config.txt),
/// a settings file and an error file outside the root, and what a test needs
/// to compare: the whole tree byte by byte, and where a secret appears.
/// One thread; removed on deinit.
final class SettingsRoot {
    let directory: String
    var root: String { directory + "/root" }
    var settingsPath: String { directory + "/boot/ambient-speaker.json" }
    var errorPath: String { directory + "/run/settings-error" }
    var outputPath: String { directory + "/output.log" }

    static let passphrase = "hostile-wifi-Pass phrase-7Q"
    static let password = "hostile-broker-secret-9X"
    /// A certificate-shaped PEM block (the applier checks the form; the TLS test uses a real CA).
    static let pem = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQk5vdEFSZWFsQ2VydA==\n-----END CERTIFICATE-----\n"
    static let sshKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIK0wmN/Cr3JXqmLW7u+g9pTh+wyqDHpSQEJQ5mI4tV0M test@ci"

    /// A complete, valid settings file holding both secrets.
    static let good = """
    {
      "_about": "a settings file for the tests",
      "hostname": "speaker-one",
      "timezone": "Europe/Berlin",
      "wifi": { "country": "DE", "ssid": "Home [5G]", "passphrase": "\(passphrase)" },
      "sshAuthorizedKeys": ["\(sshKey)"],
      "dac": "hifiberry-dac",
      "device": { "id": "speaker-one", "name": "Speaker one" },
      "mqtt": { "host": "broker.lan", "port": 8883, "username": "speaker-one", "password": "\(password)",
                "caCertificate": "\(pem.replacingNewlines)" },
      "volume": { "mode": "software" },
      "speaker": { "board": { "kind": "simulated" }, "audio": { "device": "null" } }
    }
    """

    init() throws {
        directory = try Files.makeTemporaryDirectory("/tmp/speaker-settings-XXXXXX")
        for d in ["/boot", "/run", "/root/usr/share/ambient-speaker-image", "/root/usr/share/zoneinfo/Europe",
                  "/root/usr/share/zoneinfo/Etc", "/root/etc/default", "/root/boot/firmware"] {
            try Self.makeDirectories(directory + d)
        }
        let example = try Files.readText(Self.repository + "/board/config.example.json")
        let base = example.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("  \"device\":") }.joined(separator: "\n")
        try Files.writeText(root + "/usr/share/ambient-speaker-image/config.base.json", base)
        for zone in ["Europe/Berlin", "Europe/London", "Europe/Paris"] {
            try Files.writeText(root + "/usr/share/zoneinfo/" + zone, "TZif2 (test zone)\n")
        }
        try Files.writeText(root + "/usr/share/zoneinfo/Etc/UTC", "TZif2 (test zone)\n")
        try Files.writeText(root + "/etc/hostname", "ambient-speaker\n")
        try Files.writeText(root + "/etc/hosts", "127.0.0.1\tlocalhost\n127.0.1.1\tambient-speaker\n")
        try Files.writeText(root + "/etc/default/raspi-firmware-custom", "# raspi-firmware\n")
        try Files.writeText(root + "/boot/firmware/config.txt", "[all]\narm_64bit=1\n")
    }

    deinit { _ = try? Files.shell("rm -rf '\(directory)'", logPath: "/dev/null", timeout: 30) }

    /// The repository (for board/config.example.json).
    static var repository: String {
        let file = String(#filePath)
        guard let range = file.firstRange(of: "/Tests/DaemonTests/") else { return "." }
        return String(file[..<range.lowerBound])
    }

    static func makeDirectories(_ path: String) throws {
        var prefix = ""
        for part in path.split(separator: "/") {
            prefix += "/" + part
            if mkdir(prefix, 0o755) != 0 && errno != EEXIST { throw DaemonTestError("mkdir(\(prefix))") }
        }
    }

    /// One run of the applier on `bytes` as the settings file: exit code and
    /// everything it printed (stdout and stderr).
    func apply(_ bytes: [UInt8], environment: [String] = []) throws -> (code: Int32?, output: String) {
        try write(settingsPath, bytes)
        unlink(outputPath)
        let child = try ChildProcess(executable: try SpeakerProcess.binaryPath(),
                                     arguments: ["apply-settings", "--settings", settingsPath, "--root", root, "--error-file", errorPath],
                                     logPath: outputPath, environment: environment)
        let code = child.waitForExit(timeout: 60)
        return (code, (try? Files.readText(outputPath)) ?? "")
    }

    func apply(_ text: String, environment: [String] = []) throws -> (code: Int32?, output: String) {
        try apply(Array(text.utf8), environment: environment)
    }

    func write(_ path: String, _ bytes: [UInt8]) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw DaemonTestError("open(\(path))") }
        defer { close(fd) }
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            guard n > 0 else { throw DaemonTestError("write(\(path))") }
            offset += n
        }
    }

    func text(_ path: String) -> String? { try? Files.readText(root + path) }

    /// Every entry under the root: type, mode, owner, and contents or link target.
    func snapshot() -> [String: String] {
        var out: [String: String] = [:]
        func walk(_ path: String) {
            var st = stat()
            guard lstat(path, &st) == 0 else { return }
            let head = "\(st.st_mode) \(st.st_uid):\(st.st_gid)"
            switch st.st_mode & S_IFMT {
            case S_IFDIR:
                out[path] = head
                for name in Files.list(path).sorted() { walk(path + "/" + name) }
            case S_IFLNK:
                var buffer = [CChar](repeating: 0, count: 4096)
                let n = readlink(path, &buffer, buffer.count)
                out[path] = head + " -> " + String(decoding: buffer[0..<max(0, n)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            default:
                out[path] = head + " " + ((try? Files.read(path)).map { $0.map { String($0) }.joined(separator: ",") } ?? "?")
            }
        }
        walk(root)
        return out
    }

    /// The paths whose entry differs between two snapshots (short, for a failure message).
    static func differences(_ a: [String: String], _ b: [String: String]) -> [String] {
        Set(a.keys).union(b.keys).filter { a[$0] != b[$0] }.sorted()
    }

    /// The files under `directory` (root, settings, error file, output) holding `secret`.
    func files(containing secret: String) -> [String] {
        let needle = Array(secret.utf8)
        var found: [String] = []
        func walk(_ path: String) {
            var st = stat()
            guard lstat(path, &st) == 0 else { return }
            if st.st_mode & S_IFMT == S_IFDIR {
                for name in Files.list(path) { walk(path + "/" + name) }
            } else if st.st_mode & S_IFMT == S_IFREG, let bytes = try? Files.read(path), Self.contains(bytes, needle) {
                found.append(String(path.dropFirst(directory.count)))
            }
        }
        walk(directory)
        return found.sorted()
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return false }
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] {
            if Array(haystack[i..<(i + needle.count)]) == needle { return true }
        }
        return false
    }

    func mode(_ path: String) -> UInt32? {
        var st = stat()
        return stat(path, &st) == 0 ? UInt32(st.st_mode & 0o7777) : nil
    }
}

extension String {
    /// The text with its newlines as JSON's `\n` escape (for PEM inside a JSON string).
    var replacingNewlines: String { split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\\n") }
}
