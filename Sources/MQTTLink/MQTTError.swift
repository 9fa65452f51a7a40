import CMosquitto
import SpeakerSystem

/// A libmosquitto call that failed: which function, its return code and
/// `mosquitto_strerror` for it. Created on the thread that made the call.
public struct MQTTError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The libmosquitto (or libc) function that failed, e.g. `mosquitto_tls_set`.
    public let function: String
    /// Its return code (`MOSQ_ERR_*`), or errno when `function` is a libc call.
    public let code: Int32
    /// Human-readable text for `code`.
    public let message: String

    /// Wraps a libmosquitto return code.
    public init(function: String, code: Int32) {
        self.function = function
        self.code = code
        self.message = MQTTError.text(for: code)
    }

    /// Wraps an arbitrary failure with its own message.
    public init(function: String, code: Int32, message: String) {
        self.function = function
        self.code = code
        self.message = message
    }

    /// A failed system call (SpeakerSystem's funnel): its operation, errno and text.
    init(system error: SystemError) {
        self.init(function: error.operation, code: error.errno, message: error.message)
    }

    public var description: String { "\(function) failed: \(message) (\(code))" }

    /// Words for a `MOSQ_ERR_*` code (`MQTTReasons.text`; not
    /// `mosquitto_strerror`, which reads a stale errno).
    static func text(for code: Int32) -> String {
        MQTTReasons.text(for: code)
    }
}

/// libmosquitto's process-wide initialisation, done exactly once.
enum MosquittoLibrary {
    /// `mosquitto_lib_init()`'s result; evaluating it the first time runs it
    /// (Swift guarantees a `static let` is initialised once, thread-safely).
    static let initialised: Int32 = mosquitto_lib_init()
}

extension Int32 {
    /// `MOSQ_ERR_SUCCESS` as a plain Int32.
    static let mosqSuccess = Int32(MOSQ_ERR_SUCCESS.rawValue)
}
