// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// The results of the last `capacity` commands, by id, so a redelivered
/// command (QoS 1 duplicates) gets its original result and is not re-applied.
struct RecentResults: Equatable, Sendable {
    let capacity: Int
    private var order: [String] = []
    private var results: [String: CommandResult] = [:]

    init(capacity: Int) { self.capacity = capacity }

    func result(for id: String) -> CommandResult? { results[id] }

    /// The results kept, oldest first (what the command journal stores).
    var ordered: [CommandResult] { order.compactMap { results[$0] } }

    mutating func record(_ result: CommandResult, for id: String) {
        if results.updateValue(result, forKey: id) == nil {
            order.append(id)
            if order.count > capacity { results[order.removeFirst()] = nil }
        }
    }
}
