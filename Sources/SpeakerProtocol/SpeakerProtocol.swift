/// MQTT contract payloads.
public enum SpeakerProtocolModule {}
