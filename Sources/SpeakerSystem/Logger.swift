#if canImport(Glibc)
import Glibc
#endif
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

    /// Writes `message` when `level` is at or above the threshold.
    public func log(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard level >= threshold else { return }
        backend.write(level: level, component: component, message: message())
    }

    public func error(_ m: @autoclosure () -> String) { log(.error, m()) }
    public func warning(_ m: @autoclosure () -> String) { log(.warning, m()) }
    public func notice(_ m: @autoclosure () -> String) { log(.notice, m()) }
    public func info(_ m: @autoclosure () -> String) { log(.info, m()) }
    public func debug(_ m: @autoclosure () -> String) { log(.debug, m()) }
}

/// Writes `<N>component: message` lines to stderr (journald reads the prefix).
/// Each line is one `write(2)`, so lines from different threads never interleave.
public struct StderrLogBackend: LogBackend {
    public init() {}

    public func write(level: LogLevel, component: String, message: String) {
        var line = "<\(level.rawValue)>\(component): \(message)\n"
        line.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = Glibc.write(2, bytes.baseAddress! + offset, bytes.count - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return }
                offset += n
            }
        }
    }
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
