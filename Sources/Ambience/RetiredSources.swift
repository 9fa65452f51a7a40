// SPDX-License-Identifier: Apache-2.0
/// The sources the renderer has dropped (a crossfade's old voice, a replaced
/// or deferred source), parked until the owner takes them back with
/// `AmbienceRenderer.takeRetired()`.
///
/// Its own type because it is the renderer's one real-time rule that has
/// nothing to do with mixing: the audio thread must never release the last
/// reference to a source (its deinit may free buffers, close files, log), so
/// a dropped source only moves here, and the audio thread hands it to the
/// main thread, which releases it. A fixed ring allocated at init: parking
/// and taking never allocate. Owned by the renderer's thread.
struct RetiredSources {
    /// Parked sources held before new ones are leaked instead (bounded).
    static let capacity = 16

    private var slots: ContiguousArray<SoundSource?>
    private var head = 0
    /// Sources waiting to be taken.
    private(set) var count = 0

    init() {
        slots = ContiguousArray(repeating: nil, count: Self.capacity)
    }

    /// Parks `source` without releasing it.
    mutating func park(_ source: SoundSource) {
        if count < Self.capacity {
            slots[(head + count) % Self.capacity] = source
            count += 1
        } else {
            // The owner is not draining `takeRetired()`. Leaking is bounded and
            // safer than running a deinit on the audio thread.
            _ = Unmanaged<AnyObject>.passRetained(source as AnyObject)
        }
    }

    /// Removes and returns the oldest parked source, or nil.
    mutating func take() -> SoundSource? {
        guard count > 0 else { return nil }
        let source = slots[head]
        slots[head] = nil  // not the last reference: `source` holds one
        head = (head + 1) % Self.capacity
        count -= 1
        return source
    }
}
