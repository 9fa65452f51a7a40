import CMosquitto
/// The MQTT connection, through libmosquitto.
public enum MQTTLinkModule {}
