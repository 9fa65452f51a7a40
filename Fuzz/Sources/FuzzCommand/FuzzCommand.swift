// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
import SpeakerProtocol

/// libFuzzer entry point: one arbitrary `command` payload.
///
/// Checks, besides "never traps": a decoded command re-encodes to JSON that
/// decodes to the same command; a result always serialises to JSON the
/// strict parser reads back; and the core, fed the payload, answers with
/// exactly one `command/result` (or none for a command that waits on the
/// engine, whose result follows the engine's report).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCommand(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let decoded = CommandDecoder().decode(bytes)
    let result: CommandResult
    switch decoded {
    case .success(let envelope):
        let again = CommandDecoder().decode(envelope.json.serialized())
        precondition(again == .success(envelope), "re-encoded command decodes differently: \(envelope.json.jsonText)")
        result = .accepted(id: envelope.id, revision: 1, level: nil)
    case .failure(let rejection):
        result = .rejected(rejection)
    }
    let text = result.json.serialized()
    precondition((try? JSONParser().parse(text)) != nil, "unparseable result: \(result.json.jsonText)")

    var speaker = FuzzSpeaker.make()
    _ = speaker.reduce(.start(at: .milliseconds(1)))
    _ = speaker.reduce(.revisionReservation(through: 1000, failure: nil, at: .milliseconds(1)))  // as the runtime answers
    let effects = speaker.reduce(.command(IncomingCommand(payload: bytes), at: .milliseconds(2)))
    let results = effects.filter { if case .publish(let p) = $0 { return p.topic.hasSuffix("/command/result") } else { return false } }
    precondition(results.count <= 1, "more than one result for one command")
    if case .failure = decoded { precondition(results.count == 1, "a rejected command got no result") }
    return 0
}

/// A speaker with a fixed environment for the fuzzer.
enum FuzzSpeaker {
    static func make() -> Speaker {
        let env = SpeakerEnvironment(wallClock: { WallClockReading(seconds: 1_800_000_000, milliseconds: 0) },
                                     clockSynced: { true }, newSessionID: { "fuzz-session" }, software: "fuzz")
        return Speaker(config: SpeakerConfig.defaults(hostname: "fuzz"),
                       catalog: [CatalogEntry(id: "rain", name: "Rain", summary: ""),
                                 CatalogEntry(id: "pink", name: "Pink", summary: "")],
                       environment: env, revisionReservation: 0, epoch: "e1")
    }
}
