import CMosquitto
/// Test support.
public enum TestSupportModule {}
