// SPDX-License-Identifier: Apache-2.0
/// A configuration problem, naming the key path and what was expected:
/// `volume.step: must be in (0, 0.5], got 2`.
public struct ConfigError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Dotted key path (`inputs.encoder.a`), or `(file)` for whole-file problems.
    public var path: String
    public var message: String

    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    public var description: String { "\(path): \(message)" }
}
