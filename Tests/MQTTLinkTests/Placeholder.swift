import Testing
@Test func placeholderMQTTLinkTests() { #expect(Bool(true)) }
