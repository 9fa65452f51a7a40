// SPDX-License-Identifier: Apache-2.0
/// Why a sound file cannot be used: the path and a reason for people
/// (libsndfile's or libsoxr's own text where they gave one). Any thread.
public struct SoundFileError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The file's path.
    public var path: String
    /// What is wrong, e.g. `unsupported: 6 channels (mono or stereo only)`.
    public var reason: String

    /// An error for `path` with `reason`.
    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    /// `PATH: REASON`.
    public var description: String { "\(path): \(reason)" }
}
