import Testing
@Test func placeholderSpeakerCoreTests() { #expect(Bool(true)) }
