import Testing
@Test func placeholderSpeakerSystemTests() { #expect(Bool(true)) }
