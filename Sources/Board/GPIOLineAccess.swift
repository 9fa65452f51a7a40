// SPDX-License-Identifier: Apache-2.0
import SpeakerCore

/// One line request handed out by a ``GPIOLineAccess`` (its index there).
public struct GPIORequestID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int
    public init(_ rawValue: Int) { self.rawValue = rawValue }
    public var description: String { "\(rawValue)" }
}

/// How an input line is requested: both edges with kernel timestamps, this
/// polarity and bias, and kernel debounce where the library has it.
public struct GPIOInputSettings: Equatable, Sendable {
    public var activeLow: Bool
    public var bias: LineBias
    public var debounceMicroseconds: Int

    public init(activeLow: Bool, bias: LineBias, debounceMicroseconds: Int) {
        self.activeLow = activeLow
        self.bias = bias
        self.debounceMicroseconds = debounceMicroseconds
    }
}

/// What the libgpiod build offers: its description for the log, whether it
/// can debounce in the kernel (v2), and how many edges the kernel queues per
/// line before it drops some (v1: 16, v2: 1024).
public struct GPIOLibrary: Equatable, Sendable {
    public var description: String
    public var hasKernelDebounce: Bool
    public var eventQueueSize: Int

    public init(description: String, hasKernelDebounce: Bool, eventQueueSize: Int) {
        self.description = description
        self.hasKernelDebounce = hasKernelDebounce
        self.eventQueueSize = eventQueueSize
    }
}

/// One drain of one input line's kernel queue, as the edge reader took it.
public struct EdgeRead: Equatable, Sendable {
    /// Index of the line in the reader's input list.
    public var input: Int
    /// CLOCK_MONOTONIC nanoseconds right after the drain (and the re-read).
    public var readAt: UInt64
    public var events: [LineLevelResync.Event]
    /// The line's level read after a drain that may have lost edges.
    public var reread: Bool?
    /// errno of a read that failed (the chip is gone); the reader then stops.
    public var error: Int32?

    public init(input: Int, readAt: UInt64, events: [LineLevelResync.Event], reread: Bool? = nil, error: Int32? = nil) {
        self.input = input
        self.readAt = readAt
        self.events = events
        self.reread = reread
        self.error = error
    }
}

/// What the edge reader handed over since the last take, and whether it got
/// real-time priority (nil until it has tried).
public struct EdgeReads: Equatable, Sendable {
    public var reads: [EdgeRead]
    public var realtime: Bool?

    public init(reads: [EdgeRead], realtime: Bool?) {
        self.reads = reads
        self.realtime = realtime
    }
}

/// Every access ``GPIOBoard`` makes to libgpiod, as a handful of operations:
/// find lines by name, request inputs and outputs, start the edge reader and
/// take what it read, drive outputs, stop and release.
///
/// ``LibGPIODLines`` is the live one (CGPIOD and the ``EdgeReaderThread``);
/// ``RecordingGPIOLines`` wraps another and writes every call and its answer
/// as a ``GPIOTrace`` line; ``ReplayedGPIOLines`` serves a recorded trace and
/// checks that the calls match it, so the board runs on the manual-time loop
/// exactly as it ran on the hardware. Loop thread only.
public protocol GPIOLineAccess: AnyObject {
    /// The library this access was built against.
    var library: GPIOLibrary { get }
    /// Finds each of `names` by line name across the chips in `directory`
    /// (``GPIOChips/locate(_:directory:)``).
    func locate(_ names: [String], directory: String) throws(GPIOError) -> [String: GPIOLineLocation]
    /// Requests a line as a non-blocking input reporting both edges.
    func requestInput(_ location: GPIOLineLocation, _ settings: GPIOInputSettings, consumer: String) throws(GPIOError) -> GPIORequestID
    /// Requests a line as an output, initially inactive.
    func requestOutput(_ location: GPIOLineLocation, activeLow: Bool, consumer: String) throws(GPIOError) -> GPIORequestID
    /// Starts draining `inputs`' kernel queues; returns the descriptor that is
    /// readable when ``takeReads()`` has something. `EdgeRead.input` indexes `inputs`.
    func startReader(_ inputs: [GPIORequestID]) throws(GPIOError) -> Int32
    /// Takes the drains waiting since the last call.
    func takeReads() -> EdgeReads
    /// Stops the reader (idempotent); the input requests are then free to release.
    func stopReader()
    /// Drives an output to its logical level; the errno on failure.
    func setOutput(_ request: GPIORequestID, active: Bool) -> Int32?
    /// Releases a request.
    func release(_ request: GPIORequestID)
}
