import SpeakerCore
import SpeakerSystem
import AudioALSA
import SoundFiles

/// The audio side's long-lived parts besides the engine: the sound catalog
/// (built-ins and files, scanned once at start-up), the read-ahead thread for
/// file sounds, and in `alsa-mixer` mode the mixer element with the dB the
/// speaker last wrote to it. Main thread only.
final class AudioParts {
    /// Everything playable, and the files that were skipped.
    let catalog: SoundCatalog
    /// Decodes file sounds ahead of the audio thread; started in `startAudio()`.
    let streamer: FileStreamer?
    /// The mixer element (alsa-mixer mode, once opened).
    var mixer: ALSAMixer?
    /// How levels map to the element's dB.
    var mixerMap: MixerLevelMap?
    /// What the speaker last wrote (nil = muted), to tell its own change
    /// notifications from a change made elsewhere.
    var mixerWrittenDB: Double??
    /// The mixer's registrations in the event loop.
    var mixerWatches: [EventLoop.Registration] = []

    init(catalog: SoundCatalog, streamer: FileStreamer?) {
        self.catalog = catalog
        self.streamer = streamer
    }
}
