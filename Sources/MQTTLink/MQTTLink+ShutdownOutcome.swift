extension MQTTLink {
    /// How `shutdown` ended.
    public enum ShutdownOutcome: Equatable, Sendable {
        /// Never started, or already shut down: nothing to do.
        case notRunning
        /// The network thread stopped and the client was destroyed.
        case stopped
        /// The network thread was inside a blocking connect and did not stop in
        /// time: it was detached and frees the client when the connect returns.
        case abandonedConnect
    }
}
