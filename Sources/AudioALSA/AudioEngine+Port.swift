// SPDX-License-Identifier: Apache-2.0
// The engine's requests and reports are the audio port's values; its clients
// see them with the engine.
@_exported import SpeakerPorts

/// The engine is the audio service's output (the audio port).
extension AudioEngine: AudioOutput {
    /// `start(failIfUnavailable: false)`: a device that is not there yet is
    /// retried while playback is intended (a USB DAC plugged in later).
    public func startOutput() throws(AudioOutputError) {
        do { try start(failIfUnavailable: false) } catch { throw AudioOutputError("\(error)") }
    }
}
