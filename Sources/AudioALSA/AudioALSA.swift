import CALSA
/// ALSA playback on its own real-time thread.
public enum AudioALSAModule {}
