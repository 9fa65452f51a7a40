// SPDX-License-Identifier: Apache-2.0
import Synchronization

/// Severity of a log line, numbered as sd-daemon(3) priorities so journald
/// understands the `<N>` prefix the stderr backend writes.
public enum LogLevel: Int, Comparable, Sendable, CaseIterable {
    case error = 3, warning = 4, notice = 5, info = 6, debug = 7

    /// Parses `error`, `warning`, `notice`, `info` or `debug`.
    public init?(name: String) {
        switch name {
        case "error": self = .error
        case "warning", "warn": self = .warning
        case "notice": self = .notice
        case "info": self = .info
        case "debug": self = .debug
        default: return nil
        }
    }

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue > b.rawValue }
}

/// Where log lines go. A backend must be safe to call from any thread
/// (but the audio thread never logs: it reports through its queue instead).
public protocol LogBackend: Sendable {
    func write(level: LogLevel, component: String, message: String)
}

/// A small logger handle: a component name, a threshold and a backend.
/// Components *accept* a logger in their `init`; nothing creates one globally.
public struct Logger: Sendable {
    public let component: String
    public let threshold: LogLevel
    public let backend: any LogBackend

    public init(component: String, threshold: LogLevel = .info, backend: any LogBackend) {
        self.component = component
        self.threshold = threshold
        self.backend = backend
    }

    /// The same backend and threshold under another component name.
    public func named(_ component: String) -> Logger {
        Logger(component: component, threshold: threshold, backend: backend)
    }

    /// Writes `message` when `level` is at or above the threshold, made
    /// safe by `sanitized(_:)` (messages carry untrusted text: command ids,
    /// action names, sound ids, file names, broker strings).
    public func log(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard level >= threshold else { return }
        backend.write(level: level, component: component, message: Self.sanitized(message()))
    }

    /// The most bytes of one message that reach a backend; the rest is cut
    /// (a 4 KiB command can still be quoted whole).
    public static let maxMessageBytes = 6_144

    /// `message` as one safe log line: control characters (C0 including
    /// newline, CR, tab, NUL and ESC; DEL; C1), Unicode line/paragraph
    /// separators and bidirectional overrides are written as visible escapes
    /// (`\n`, `\0`, `\x1b`, `\u{2028}`), so no text can start a forged line
    /// with its own `<N>` priority or drive a terminal; messages longer than
    /// `maxMessageBytes` are cut at a character boundary and say how much was dropped.
    public static func sanitized(_ message: String) -> String {
        let utf8 = message.utf8
        if utf8.count <= maxMessageBytes && utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return message }
        var out = ""
        out.reserveCapacity(min(utf8.count, maxMessageBytes) + 16)
        var used = 0
        for scalar in message.unicodeScalars {
            let piece: String
            switch scalar.value {
            case 0x0A: piece = "\\n"
            case 0x0D: piece = "\\r"
            case 0x09: piece = "\\t"
            case 0x00: piece = "\\0"
            case 0x01...0x1F, 0x7F:
                piece = "\\x" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
            case 0x80...0x9F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069:
                piece = "\\u{" + String(scalar.value, radix: 16) + "}"
            default:
                piece = String(scalar)
            }
            let size = piece.utf8.count
            if used + size > maxMessageBytes {
                let dropped = utf8.count - used
                out += "… (\(dropped) more bytes cut)"
                return out
            }
            out += piece
            used += size
        }
        return out
    }

    public func error(_ m: @autoclosure () -> String) { log(.error, m()) }
    public func warning(_ m: @autoclosure () -> String) { log(.warning, m()) }
    public func notice(_ m: @autoclosure () -> String) { log(.notice, m()) }
    public func info(_ m: @autoclosure () -> String) { log(.info, m()) }
    public func debug(_ m: @autoclosure () -> String) { log(.debug, m()) }
}

/// Keeps log lines in memory, for tests that assert what was logged.
public final class MemoryLogBackend: LogBackend {
    /// One recorded line.
    public struct Entry: Sendable, Equatable {
        public var level: LogLevel
        public var component: String
        public var message: String
    }

    private let storage = Mutex<[Entry]>([])

    public init() {}

    public func write(level: LogLevel, component: String, message: String) {
        storage.withLock { $0.append(Entry(level: level, component: component, message: message)) }
    }

    /// Everything logged so far.
    public var entries: [Entry] { storage.withLock { $0 } }
}
