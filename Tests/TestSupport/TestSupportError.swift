// SPDX-License-Identifier: Apache-2.0
/// Why a test harness operation failed: what was attempted and details
/// (a libc errno text, a libmosquitto error, or the broker's log tail).
public struct TestSupportError: Error, CustomStringConvertible, Sendable {
    /// The operation, e.g. `posix_spawn` or `mosquitto_connect_bind_v5`.
    public let operation: String
    /// Human-readable details.
    public let detail: String

    /// Creates an error.
    public init(_ operation: String, _ detail: String) {
        self.operation = operation
        self.detail = detail
    }

    public var description: String { "\(operation): \(detail)" }
}
