import Testing
@Test func placeholderAudioALSATests() { #expect(Bool(true)) }
