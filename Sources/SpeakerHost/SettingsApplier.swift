// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerCore
import SpeakerProtocol
import SpeakerSystem

/// Applies the SD card image's settings file to a root directory (`/` on the
/// Pi, a scratch directory in tests): decodes it (`ImageSettingsDecoder`),
/// plans every change from the root's current files (`ImageSettings.plan`),
/// stages each new file beside its destination (written, `fsync`ed, with its
/// final mode and owner), and only then renames them all into place. An
/// invalid file fails before the first byte is written, so it changes
/// nothing. Blocking file I/O; one thread.
public struct SettingsApplier {
    public let settingsPath: String
    public let root: String
    /// The service user owning the password file (and the config's group); nil leaves the owner as is (tests).
    public let serviceUser: String?

    public init(settingsPath: String, root: String, serviceUser: String?) {
        self.settingsPath = settingsPath
        self.root = root.hasSuffix("/") ? String(root.dropLast()) : root
        self.serviceUser = serviceUser
    }

    /// A failure: a `ConfigError` naming the key for an invalid file, or a system error while staging.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        /// What was done before the failure (journal lines, info), e.g. an interrupted apply's staged files removed.
        public var notices: [String] = []
    }

    /// Applies the file; answers the plan that was carried out. Last, it
    /// records the hash of the file's bytes as it leaves them (the bytes it
    /// read, or the blanked bytes it wrote) in `SettingsPaths.appliedHash`:
    /// a file saved at any moment after the read hashes differently, so it
    /// is applied next time instead of being taken as applied.
    /// `beforeBlanking` runs between the renames and the blanking (tests
    /// save a new file there, as a user editing the card might).
    /// Every start first removes the staged copies an interrupted apply left
    /// (kill -9, a power cut), whatever the file holds; such an apply never
    /// recorded its hash, so the same file is applied again, which finishes it.
    public func apply(beforeBlanking: () -> Void = {}) throws(Failure) -> SettingsPlan {
        let cleanup = removeInterruptedApplies()
        do { return try applyFile(beforeBlanking: beforeBlanking, notices: cleanup) } catch {
            var failure = error
            failure.notices = cleanup + failure.notices
            throw failure
        }
    }

    private func applyFile(beforeBlanking: () -> Void, notices: [String]) throws(Failure) -> SettingsPlan {
        let bytes: [UInt8]
        do { bytes = try FileIO.read(path: settingsPath, maxBytes: ImageSettingsDecoder.maxBytes, followSymlinks: false) } catch {
            if error.errno == EFBIG { throw Failure(description: "(file): larger than \(ImageSettingsDecoder.maxBytes) bytes") }
            throw Failure(description: "(file): cannot read \(settingsPath): \(error.message)")
        }
        var plan: SettingsPlan
        do {
            let raw = try parse(bytes)
            plan = try AppliedSettings.plan(file: raw, previous: previousDocument(), view: try view())
        } catch {
            throw Failure(description: error.description)
        }
        let owners = try owners()
        plan.notices = notices + plan.notices
        try checkTargets(plan.changes)
        var staged: [(change: FileChange, temporary: String?)] = []
        do throws(SystemError) {
            for change in plan.changes { staged.append((change, try stage(change, owners: owners))) }
        } catch {
            for s in staged { if let t = s.temporary { unlink(t) } }
            throw Failure(description: "nothing changed: staging failed: \(error)")
        }
        var directories: Set<String> = []
        for (i, s) in staged.enumerated() {
            let target = root + s.change.path
            var failed: String?
            if let temporary = s.temporary {
                if rename(temporary, target) != 0 { failed = "rename \(temporary) to \(target): \(String(cString: strerror(errno)))" }
            } else if unlink(target) != 0 && errno != ENOENT {
                failed = "remove \(target): \(String(cString: strerror(errno)))"
            }
            if let failed {
                // No staged copy (some hold a secret) outlives the failure; the hash is not recorded, so the next start applies the file again.
                for rest in staged[i...] { if let t = rest.temporary { unlink(t) } }
                throw Failure(description: "\(failed) (the files before it were replaced; the next start applies the file again)")
            }
            directories.insert(FileIO.split(target).directory)
        }
        for d in directories.sorted() {
            let fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if fd >= 0 { fsync(fd); close(fd) }
        }
        beforeBlanking()
        var left = bytes
        if let scrubbed = plan.scrubbed {
            do {
                if let written = try SettingsBlanking.overwrite(settingsPath, expecting: bytes, with: scrubbed) {
                    left = written
                    plan.notices.append("blanked the Wi-Fi passphrase and MQTT password in \(settingsPath) (applied; a null keeps them)")
                } else {
                    plan.warnings.append("\(settingsPath) was saved again while it was applied: not blanked; the new file is applied next")
                }
            } catch {
                throw Failure(description: "applied, but blanking the secrets in \(settingsPath) failed: \(error); the file is unchanged and still holds them (the next start tries again)")
            }
        }
        do { try FileIO.writeAtomically(path: root + SettingsPaths.appliedHash, text: SHA256.hex(left) + "\n", mode: 0o644) } catch {
            throw Failure(description: "applied, but recording it in \(root + SettingsPaths.appliedHash) failed: \(error) (the next start applies the file again)")
        }
        return plan
    }

    /// The previous applied document, or nil when there is none (or it cannot be read: then the file applies on its own).
    private func previousDocument() -> JSONValue? {
        guard let bytes = try? FileIO.read(path: root + SettingsPaths.appliedSettings, maxBytes: 1 << 20, followSymlinks: false) else { return nil }
        return try? JSONParser(maxDepth: 16).parse(bytes)
    }

    /// Refuses, before anything is staged, a change whose destination is a
    /// directory (a rename or unlink there fails, half-way through the renames).
    private func checkTargets(_ changes: [FileChange]) throws(Failure) {
        for change in changes {
            var st = stat()
            if lstat(root + change.path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR {
                throw Failure(description: "nothing changed: \(root + change.path) is a directory; it must be a file (or absent)")
            }
        }
    }

    /// Removes the staged files of an apply a power cut interrupted (never
    /// renamed, so never any file's content) beside every managed file; one
    /// notice per file removed, or per one that could not be.
    private func removeInterruptedApplies() -> [String] {
        var byDirectory: [String: [String]] = [:]
        for path in SettingsPaths.managed {
            let (directory, name) = FileIO.split(root + path)
            byDirectory[directory, default: []].append(name)
        }
        var notices: [String] = []
        for (directory, names) in byDirectory.sorted(by: { $0.key < $1.key }) {
            let outcome = InterruptedWrites.remove(in: directory, for: names)
            notices += outcome.removed.map { "removed \(directory)/\($0), left by an interrupted apply" }
            notices += outcome.failed.map { "could not remove \(directory)/\($0.name), left by an interrupted apply: \($0.error)" }
        }
        return notices
    }

    private func parse(_ bytes: [UInt8]) throws(ConfigError) -> JSONValue {
        do { return try JSONParser(maxDepth: 16).parse(bytes) } catch {
            throw ConfigError(path: "(file)", message: "not valid JSON: \(error)")
        }
    }

    /// The root's current files that the plan depends on.
    func view() throws(ConfigError) -> SettingsSystemView {
        func text(_ path: String) -> String? {
            (try? FileIO.read(path: root + path, maxBytes: 1 << 20)).map { String(decoding: $0, as: UTF8.self) }
        }
        let base: [UInt8]
        do { base = try FileIO.read(path: root + SettingsPaths.baseConfig, maxBytes: 256 * 1024) } catch {
            throw ConfigError(path: SettingsPaths.baseConfig, message: "cannot read the image's base config: \(error.message)")
        }
        var st = stat()
        let saved = stat(root + SettingsPaths.password, &st) == 0 && st.st_size > 0
        let zones = root + SettingsPaths.zoneinfo
        return SettingsSystemView(
            baseConfig: base, hosts: text(SettingsPaths.hosts),
            hostname: text(SettingsPaths.hostname).map { String($0.prefix { $0 != "\n" }) },
            wpaConfig: text(SettingsPaths.wpaConfig), firmwareCustom: text(SettingsPaths.firmwareCustom),
            configTxt: text(SettingsPaths.configTxt), passwordSaved: saved,
            zoneExists: { name in
                // A zone file (TZif), not one of the tables or links beside them.
                var z = stat()
                guard stat(zones + "/" + name, &z) == 0, (z.st_mode & S_IFMT) == S_IFREG else { return false }
                return (try? FileIO.read(path: zones + "/" + name, exactly: 4)) == Array("TZif".utf8)
            })
    }

    /// uid/gid of the service user, or nil (no chown).
    private func owners() throws(Failure) -> (uid: uid_t, gid: gid_t)? {
        guard let name = serviceUser else { return nil }
        guard let entry = getpwnam(name) else { throw Failure(description: "nothing changed: no user \"\(name)\"") }
        return (entry.pointee.pw_uid, entry.pointee.pw_gid)
    }

    /// Writes the new file (or link) beside its destination; answers its
    /// temporary path, or nil for a removal.
    private func stage(_ change: FileChange, owners: (uid: uid_t, gid: gid_t)?) throws(SystemError) -> String? {
        let target = root + change.path
        let (directory, name) = FileIO.split(target)
        let parentMode: mode_t = change.path.hasPrefix("/root/.ssh/") ? 0o700 : 0o755
        try SystemFacts.makeDirectories(path: directory, mode: parentMode)
        let temporary = "\(directory)/.\(name).apply-\(getpid())-\(randomBytes(4).map { String($0, radix: 16) }.joined())"
        switch change {
        case .remove:
            return nil
        case .symlink(_, let linkTarget):
            _ = try systemCall("symlink", path: temporary) { symlink(linkTarget, temporary) }
            return temporary
        case .write(_, let bytes, let mode, let owner):
            let fd = try systemCall("open", path: temporary) {
                open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode_t(0o600))
            }
            do throws(SystemError) {
                if let owners {
                    switch owner {
                    case .root: break
                    case .serviceUser: _ = try systemCall("fchown", path: temporary) { fchown(fd, owners.uid, owners.gid) }
                    case .rootWithServiceGroup: _ = try systemCall("fchown", path: temporary) { fchown(fd, 0, owners.gid) }
                    }
                }
                _ = try systemCall("fchmod", path: temporary) { fchmod(fd, mode_t(mode)) }
                try FileIO.writeAll(fd: fd, bytes: bytes, path: temporary)
                _ = try systemCall("fsync", path: temporary) { fsync(fd) }
                close(fd)
            } catch {
                close(fd)
                unlink(temporary)
                throw error
            }
            return temporary
        }
    }
}
