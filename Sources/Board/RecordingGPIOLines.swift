// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerSystem

/// A ``GPIOLineAccess`` that passes every call to another (the live
/// ``LibGPIODLines``) and writes the call and its answer as one
/// ``GPIOTrace`` line, stamped with `clock` (the loop's time) where time
/// matters, so that ``ReplayedGPIOLines`` can run the board again from it.
/// For recording the board on real drivers (the HIL VM): the executable uses
/// it only when `AMBIENT_SPEAKER_GPIO_TRACE` names a file. Each line is
/// written as it happens, so a speaker that is killed leaves its trace up
/// to that point. Loop thread only.
public final class RecordingGPIOLines: GPIOLineAccess {
    private let inner: any GPIOLineAccess
    private let clock: () -> UInt64
    private let write: (String) -> Void

    /// Records the calls made to `inner`; `write` gets each line of text (with its newline).
    public init(wrapping inner: any GPIOLineAccess, clock: @escaping () -> UInt64, write: @escaping (String) -> Void) {
        self.inner = inner
        self.clock = clock
        self.write = write
        write(GPIOTrace.header + "\n")
        record(.library(inner.library))
    }

    /// Records into the file at `path` (created or truncated, mode 0644).
    public convenience init(wrapping inner: any GPIOLineAccess, clock: @escaping () -> UInt64, path: String) throws(SystemError) {
        let file = try TraceFile(path: path)
        self.init(wrapping: inner, clock: clock) { file.append($0) }
    }

    public var library: GPIOLibrary { inner.library }

    public func locate(_ names: [String], directory: String) throws(GPIOError) -> [String: GPIOLineLocation] {
        let result = Result { () throws(GPIOError) in try inner.locate(names, directory: directory) }
        record(.locate(names: names, directory: directory, result: result))
        return try result.get()
    }

    public func requestInput(_ location: GPIOLineLocation, _ settings: GPIOInputSettings, consumer: String) throws(GPIOError) -> GPIORequestID {
        let result = Result { () throws(GPIOError) in try inner.requestInput(location, settings, consumer: consumer) }
        record(.requestInput(line: location.name, chip: location.chip.name, offset: location.line.offset,
                             settings: settings, result: result))
        return try result.get()
    }

    public func requestOutput(_ location: GPIOLineLocation, activeLow: Bool, consumer: String) throws(GPIOError) -> GPIORequestID {
        let result = Result { () throws(GPIOError) in try inner.requestOutput(location, activeLow: activeLow, consumer: consumer) }
        record(.requestOutput(line: location.name, chip: location.chip.name, offset: location.line.offset,
                              activeLow: activeLow, result: result))
        return try result.get()
    }

    public func startReader(_ inputs: [GPIORequestID]) throws(GPIOError) -> Int32 {
        do throws(GPIOError) {
            let fd = try inner.startReader(inputs)
            record(.startReader(inputs: inputs, error: nil))
            return fd
        } catch {
            record(.startReader(inputs: inputs, error: error))
            throw error
        }
    }

    public func takeReads() -> EdgeReads {
        let taken = inner.takeReads()
        record(.take(at: clock(), taken))
        return taken
    }

    public func stopReader() {
        inner.stopReader()
        record(.stopReader)
    }

    public func setOutput(_ request: GPIORequestID, active: Bool) -> Int32? {
        let at = clock()
        let e = inner.setOutput(request, active: active)
        record(.setOutput(request, active: active, at: at, errno: e))
        return e
    }

    public func release(_ request: GPIORequestID) {
        inner.release(request)
        record(.release(request))
    }

    private func record(_ entry: GPIOTraceEntry) { write(GPIOTrace.lines(entry) + "\n") }
}

/// The trace file: opened once, every line appended with one write(2).
private final class TraceFile {
    let fd: Int32
    let path: String

    init(path: String) throws(SystemError) {
        self.path = path
        fd = try systemCall("open", path: path) { open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0o644) }
    }

    deinit { close(fd) }

    /// Best effort: a trace that cannot be written must not stop the board.
    func append(_ text: String) {
        do throws(SystemError) { try FileIO.writeAll(fd: fd, bytes: Array(text.utf8), path: path) } catch {}
    }
}
