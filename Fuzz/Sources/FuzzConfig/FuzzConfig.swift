// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
import SpeakerProtocol

/// libFuzzer entry point: one arbitrary config file.
///
/// Checks, besides "never traps": an accepted config's resolved JSON (what
/// `check-config` prints) is itself a valid config that resolves to the same
/// value, and a rejection always says what is wrong.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfig(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let decoder = ConfigDecoder(hostname: "fuzz-host")
    do {
        let config = try decoder.decode(bytes)
        do {
            let again = try decoder.decode(config.json.serialized())
            precondition(again == config, "resolved config does not round-trip: \(config.json.jsonText)")
        } catch {
            preconditionFailure("resolved config rejected (\(error)): \(config.json.jsonText)")
        }
    } catch {
        // The path is the key path; it is empty only for a key that is itself
        // empty (`{"": …}`), which the message then reports as unknown.
        precondition(!error.message.isEmpty, "a config error without a message: \(error)")
    }
    return 0
}
