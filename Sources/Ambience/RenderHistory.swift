// SPDX-License-Identifier: Apache-2.0
/// What the renderer has recently produced, so that frames already queued in
/// the device can be rewound and rendered again with a new state.
///
/// For every frame it keeps the *dry* mix (after the voices' crossfade gains,
/// before the master fade and volume) in a ring, and for every rendered chunk
/// the master state it started with and whether its mix was exactly one voice
/// at full crossfade gain ("voice-steady"). A rewind of R frames restores the
/// master state R frames back and marks those R frames for replay: the
/// renderer then reads their dry mix from here instead of pulling the sources
/// again (which would skip ahead), so a new pause fade or gain ramp applies to
/// the same audio, with no jump and no repeat.
///
/// Positions are absolute counts of the frames rendered while audible since
/// the renderer was created (`written` is the next one; silent output is not
/// recorded, so a replay cut short by a pause resumes where it stopped). A
/// rewind may not reach before the last applied request (`epochStart`): the
/// state recorded before a request would lose it. Owned by the renderer's
/// thread; allocates only in `init`.
struct RenderHistory {
    struct Chunk {
        var start: Int64
        var master: MasterGain
        var voiceSteady: Bool
    }

    /// Frames of dry mix kept (0: rewinding disabled).
    let capacity: Int
    /// The next frame to render.
    private(set) var written: Int64 = 0
    /// The earliest frame a rewind may reach (where the last request applied).
    private(set) var epochStart: Int64 = 0
    /// One past the last frame of a pending replay (≤ `written`: none pending).
    private(set) var replayEnd: Int64 = 0
    /// Whether the whole pending replay span was rendered voice-steady.
    private(set) var replaySpanVoiceSteady = false

    private let dry: UnsafeMutablePointer<Float>
    private var chunks: ContiguousArray<Chunk>
    private var chunkHead = 0
    private var chunkCount = 0

    /// A history of `capacity` frames for chunks of at least `minChunkFrames`.
    init(capacity: Int, minChunkFrames: Int) {
        self.capacity = max(0, capacity)
        dry = .allocate(capacity: max(2, 2 * self.capacity))
        dry.initialize(repeating: 0, count: max(2, 2 * self.capacity))
        let slots = self.capacity == 0 ? 1 : self.capacity / max(1, minChunkFrames) + 4
        chunks = ContiguousArray(repeating: Chunk(start: 0, master: MasterGain(), voiceSteady: false), count: slots)
    }

    /// Frees the ring (the owner calls it from its deinit).
    func deallocate() { dry.deallocate() }

    /// Frames of the pending replay still to render.
    var replayRemaining: Int { Int(max(0, replayEnd - written)) }

    /// A request was applied at the write head: nothing before it can be replayed.
    mutating func requestApplied() { epochStart = written }

    /// Starts recording a chunk at the write head.
    mutating func beginChunk(master: MasterGain, voiceSteady: Bool) {
        guard capacity > 0 else { return }
        if chunkCount == chunks.count {
            chunkHead = (chunkHead + 1) % chunks.count
            chunkCount -= 1
        }
        chunks[(chunkHead + chunkCount) % chunks.count] = Chunk(start: written, master: master, voiceSteady: voiceSteady)
        chunkCount += 1
    }

    /// Stores `frames` stereo frames of dry mix at the write head and advances it.
    /// `samples` nil stores silence.
    mutating func store(_ samples: UnsafePointer<Float>?, frames: Int) {
        if capacity > 0 {
            var done = 0
            while done < frames {
                let at = Int((written + Int64(done)) % Int64(capacity))
                let n = min(frames - done, capacity - at)
                if let samples {
                    (dry + 2 * at).update(from: samples + 2 * done, count: 2 * n)
                } else {
                    (dry + 2 * at).update(repeating: 0, count: 2 * n)
                }
                done += n
            }
        }
        written += Int64(frames)
    }

    /// Drops the pending replay (its frames will not be rendered again).
    mutating func cancelReplay() { replayEnd = written }

    /// Copies the recorded dry mix of `frames` frames from the write head (a replay).
    func read(into out: UnsafeMutablePointer<Float>, frames: Int) {
        var done = 0
        while done < frames {
            let at = Int((written + Int64(done)) % Int64(capacity))
            let n = min(frames - done, capacity - at)
            (out + 2 * done).update(from: dry + 2 * at, count: 2 * n)
            done += n
        }
    }

    private func chunk(_ i: Int) -> Chunk { chunks[(chunkHead + i) % chunks.count] }

    /// How many of the most recent frames may be rewound. With `voiceChange`
    /// (a switch will crossfade from the rewound frame) only a span rendered
    /// voice-steady, and never while a replay is pending.
    func rewindable(voiceChange: Bool) -> Int {
        guard capacity > 0, chunkCount > 0 else { return 0 }
        if voiceChange && replayRemaining > 0 { return 0 }
        var lower = max(written - Int64(capacity), epochStart, chunk(0).start)
        if voiceChange {
            var i = chunkCount - 1
            while i >= 0 && chunk(i).voiceSteady && chunk(i).start > lower { i -= 1 }
            if i >= 0 && !chunk(i).voiceSteady {
                // Chunk i is not steady: the span may start only after it ends.
                lower = max(lower, i + 1 < chunkCount ? chunk(i + 1).start : written)
            }
        }
        return Int(max(0, written - lower))
    }

    /// Moves the write head `frames` back (at most `rewindable(voiceChange: false)`)
    /// and returns the master state at the new head. The frames between stay
    /// recorded and are marked for replay.
    mutating func rewind(frames: Int) -> MasterGain? {
        let frames = min(frames, rewindable(voiceChange: false))
        guard frames > 0 else { return nil }
        let target = written - Int64(frames)
        var steady = replayRemaining > 0 ? replaySpanVoiceSteady : true
        var restored: MasterGain?
        // Drop the chunks at or after the target (they are rendered again);
        // the one containing it gives the master state, advanced to the target.
        while chunkCount > 0 {
            let last = chunk(chunkCount - 1)
            if !last.voiceSteady { steady = false }
            if last.start < target {
                var master = last.master
                master.advance(frames: Int(target - last.start))
                restored = master
                break
            }
            chunkCount -= 1
            if last.start == target {
                restored = last.master
                break
            }
        }
        guard let restored else { return nil }
        replaySpanVoiceSteady = steady
        replayEnd = max(replayEnd, written)
        written = target
        return restored
    }
}
