// SPDX-License-Identifier: Apache-2.0
/// What one `AmbienceRenderer.render` call tells its caller (the audio thread).
public struct RenderOutcome: Sendable, Equatable {
    /// The transport is paused and its fade-out has completed: this output and
    /// all further output are exact zeros until the next `play`.
    public var isSilent: Bool
    /// The fade-out completed during this call (the transition into `isSilent`).
    public var fadeOutCompleted: Bool
    /// How many dropped sources wait in `AmbienceRenderer.takeRetired()`. The
    /// caller must take them and release them off the audio thread.
    public var retiredPending: Int

    /// An outcome with the given fields.
    public init(isSilent: Bool, fadeOutCompleted: Bool, retiredPending: Int) {
        self.isSilent = isSilent
        self.fadeOutCompleted = fadeOutCompleted
        self.retiredPending = retiredPending
    }
}
