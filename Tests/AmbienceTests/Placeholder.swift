import Testing
@Test func placeholderAmbienceTests() { #expect(Bool(true)) }
