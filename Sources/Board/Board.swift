import SpeakerCore
/// Boards: the simulated board and (later) libgpiod.
public enum BoardModule {}
