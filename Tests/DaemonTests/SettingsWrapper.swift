// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import TestSupport

/// The image's boot wrapper (`board/image/overlay/usr/libexec/ambient-speaker-image/apply-settings`)
/// run on a `SettingsRoot`: every path under the scratch root, `systemctl`
/// a stub that only records its arguments, `ambient-speaker` the built binary
/// behind a stub that can save a new settings file right after the applier
/// returns (what a user editing the card at that moment does). One thread.
struct SettingsWrapper {
    let root: SettingsRoot
    var stubs: String { root.directory + "/stubs" }
    var script: String { SettingsRoot.repository + "/board/image/overlay/usr/libexec/ambient-speaker-image/apply-settings" }
    var recorded: String? { root.text("/var/lib/ambient-speaker-image/applied.sha256") }
    var led: String? { root.text("/sys/class/leds/ACT/trigger").map { String($0.prefix { $0 != "\n" }) } }

    init(_ root: SettingsRoot) throws {
        self.root = root
        for d in [stubs, root.root + "/proc/sys/kernel", root.root + "/sys/class/leds/ACT"] { try SettingsRoot.makeDirectories(d) }
        try Files.writeText(root.root + "/proc/sys/kernel/hostname", "ambient-speaker\n")
        try Files.writeText(root.root + "/sys/class/leds/ACT/trigger", "none [mmc0] timer\n")
        let binary = try SpeakerProcess.binaryPath()
        try Files.writeText(stubs + "/systemctl", "#!/bin/sh\necho \"systemctl $*\" >>\(root.directory)/systemctl.log\nexit 0\n")
        // The applier, then (when a file is waiting in save-after) the save that follows it.
        try Files.writeText(stubs + "/ambient-speaker", """
            #!/bin/sh
            \(binary) "$@"
            rc=$?
            if [ -e \(root.directory)/save-after ]; then mv \(root.directory)/save-after \(root.settingsPath); fi
            exit $rc

            """)
        // sha256sum, noting any input larger than the applier's limit (never read whole).
        try Files.writeText(stubs + "/sha256sum", """
            #!/bin/sh
            size=$(stat -L -c %s /dev/stdin 2>/dev/null || echo 0)
            if [ "$size" -gt 65536 ]; then echo "$size" >>\(root.directory)/hashed-large; fi
            exec /usr/bin/sha256sum "$@"

            """)
        for tool in ["systemctl", "ambient-speaker", "sha256sum"] { chmod(stubs + "/" + tool, 0o755) }
    }

    /// One run of the wrapper on the settings file as it is; `saveAfter`: the
    /// bytes saved over it the moment the applier returns.
    func run(saveAfter: [UInt8]? = nil) throws -> (code: Int32?, output: String) {
        if let saveAfter { try root.write(root.directory + "/save-after", saveAfter) }
        unlink(root.outputPath)
        let child = try ChildProcess(executable: "/usr/bin/env", arguments: [
            "PATH=\(stubs):/usr/local/bin:/usr/bin:/bin", "APPLY_SETTINGS_ROOT=\(root.root)", "APPLY_SETTINGS_USER=",
            "SETTINGS_FILE=\(root.settingsPath)", "/bin/bash", script,
        ], logPath: root.outputPath)
        let code = child.waitForExit(timeout: 120)
        return (code, (try? Files.readText(root.outputPath)) ?? "")
    }
}
