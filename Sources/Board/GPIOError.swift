// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

/// Why the GPIO board could not start or stopped, each with a message that
/// says what to do, and the exit code it maps to (config-and-cli.md: 1 bad
/// configuration, 2 hardware or system failure). Any thread.
public enum GPIOError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No chip has a line of this name (a configuration error).
    case unknownLine(name: String, chips: [String])
    /// A chip could not be opened or read.
    case opening(path: String, errno: Int32)
    /// Requesting a line failed; `consumer` names who holds it when busy.
    case request(line: String, location: String, path: String, errno: Int32, consumer: String?)
    /// A requested line's chip went away (or its events failed) while running.
    case chipGone(line: String, location: String, errno: Int32)
    /// Driving an output line failed.
    case output(line: String, location: String, errno: Int32)
    /// The thread that reads the input lines' edges could not be set up.
    case reader(errno: Int32)

    public var exitCode: Int32 {
        if case .unknownLine = self { return 1 }
        return 2
    }

    public var description: String {
        switch self {
        case let .unknownLine(name, chips):
            let where_ = chips.isEmpty ? "there are no GPIO chips (/dev/gpiochip*)" : "chips searched: \(chips.joined(separator: ", "))"
            let hint = HeaderPins.missingControllerHint(name, chips: chips).map { "; \($0)" } ?? ""
            return "GPIO line \"\(name)\" not found on any chip (\(where_))\(hint); `ambient-speaker devices` lists the lines a configuration may name"
        case let .opening(path, e):
            if e == EACCES || e == EPERM { return "no permission to open \(path)\(Self.groupHint(path: path))" }
            return "cannot open GPIO chip \(path): \(String(cString: strerror(e)))"
        case let .request(line, location, path, e, consumer):
            if e == EBUSY {
                let who = consumer.map { $0.isEmpty ? "another program (no consumer name)" : "\"\($0)\"" } ?? "another program"
                return "GPIO line \(line) (\(location)) is already in use by \(who); stop it or choose another line"
            }
            if e == EACCES || e == EPERM { return "no permission to request GPIO line \(line) (\(location))\(Self.groupHint(path: path))" }
            return "cannot request GPIO line \(line) (\(location)): \(String(cString: strerror(e)))"
        case let .chipGone(line, location, e):
            return "GPIO chip of line \(line) (\(location)) is gone: \(String(cString: strerror(e))); the board was removed or its driver unloaded"
        case let .output(line, location, e):
            return "cannot drive GPIO output \(line) (\(location)): \(String(cString: strerror(e)))"
        case let .reader(e):
            return "cannot start the GPIO edge reader thread: \(String(cString: strerror(e)))"
        }
    }

    /// `: it belongs to group "gpio" — add the user to it (…)`, from the device's group.
    static func groupHint(path: String) -> String {
        var st = stat()
        guard stat(path, &st) == 0 else { return "" }
        let group = getgrgid(st.st_gid).flatMap { $0.pointee.gr_name.map { String(cString: $0) } } ?? "gid \(st.st_gid)"
        return ": it belongs to group \"\(group)\" (mode \(String(st.st_mode & 0o777, radix: 8))); add the user running the speaker to that group (usermod -aG \(group) USER) and log in again"
    }
}
