/// Generated sounds, fades and gain ramps: the pure DSP of the speaker.
public enum AmbienceModule {}
