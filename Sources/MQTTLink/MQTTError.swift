// SPDX-License-Identifier: Apache-2.0
import CMosquitto
import SpeakerPorts
import SpeakerSystem

extension MQTTError {
    /// Wraps a libmosquitto return code.
    init(function: String, code: Int32) {
        self.init(function: function, code: code, message: MQTTError.text(for: code))
    }

    /// A failed system call (SpeakerSystem's funnel): its operation, errno and text.
    init(system error: SystemError) {
        self.init(function: error.operation, code: error.errno, message: error.message)
    }

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
