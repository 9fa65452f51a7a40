// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import CGPIOD
import SpeakerCore
import SpeakerSystem

/// The live ``GPIOLineAccess``: libgpiod through CGPIOD (v1 or v2, as built),
/// one request per line, and the ``EdgeReaderThread`` draining the inputs.
/// Loop thread only (the reader thread uses the input requests until
/// ``stopReader()`` has joined it).
public final class LibGPIODLines: GPIOLineAccess {
    private var requests: [OpaquePointer?] = []
    private var reader: EdgeReaderThread?

    public init() {}

    deinit {
        stopReader()
        for request in requests { cgpiod_request_release(request) }
    }

    public var library: GPIOLibrary {
        GPIOLibrary(description: GPIOChips.libraryDescription, hasKernelDebounce: GPIOChips.hasKernelDebounce,
                    eventQueueSize: Int(cgpiod_event_queue_size()))
    }

    public func locate(_ names: [String], directory: String) throws(GPIOError) -> [String: GPIOLineLocation] {
        try GPIOChips.locate(names, directory: directory)
    }

    /// `cgpiod_request_input`, then `O_NONBLOCK` on its descriptor.
    public func requestInput(_ location: GPIOLineLocation, _ settings: GPIOInputSettings, consumer: String) throws(GPIOError) -> GPIORequestID {
        let cBias: cgpiod_bias
        switch settings.bias {
        case .pullUp: cBias = CGPIOD_BIAS_PULL_UP
        case .pullDown: cBias = CGPIOD_BIAS_PULL_DOWN
        case .disabled: cBias = CGPIOD_BIAS_DISABLED
        case .asIs: cBias = CGPIOD_BIAS_AS_IS
        }
        guard let request = cgpiod_request_input(location.chip.path, UInt32(location.line.offset), consumer, cBias,
                                                 settings.activeLow ? 1 : 0, UInt(settings.debounceMicroseconds)) else {
            throw Self.requestError(location, errno: errno)
        }
        do throws(SystemError) {
            try Descriptors.setNonBlocking(cgpiod_request_fd(request))
        } catch {
            cgpiod_request_release(request)
            throw Self.requestError(location, errno: error.errno)
        }
        return keep(request)
    }

    /// `cgpiod_request_output`, initially inactive.
    public func requestOutput(_ location: GPIOLineLocation, activeLow: Bool, consumer: String) throws(GPIOError) -> GPIORequestID {
        guard let request = cgpiod_request_output(location.chip.path, UInt32(location.line.offset), consumer, activeLow ? 1 : 0, 0) else {
            throw Self.requestError(location, errno: errno)
        }
        return keep(request)
    }

    public func startReader(_ inputs: [GPIORequestID]) throws(GPIOError) -> Int32 {
        stopReader()
        do throws(SystemError) {
            let reader = try EdgeReaderThread(requests: inputs.compactMap { requests[$0.rawValue] },
                                              queueSize: Int(cgpiod_event_queue_size()))
            try reader.start()
            self.reader = reader
            return reader.ready.fd
        } catch {
            throw GPIOError.reader(errno: error.errno)
        }
    }

    public func takeReads() -> EdgeReads {
        guard let reader else { return EdgeReads(reads: [], realtime: nil) }
        let (reads, realtime) = reader.take()
        return EdgeReads(reads: reads, realtime: realtime)
    }

    public func stopReader() {
        reader?.stop()  // joined: the requests are ours again
        reader = nil
    }

    /// `cgpiod_request_set`.
    public func setOutput(_ request: GPIORequestID, active: Bool) -> Int32? {
        guard let pointer = requests[request.rawValue] else { return EBADF }
        return cgpiod_request_set(pointer, active ? 1 : 0) < 0 ? errno : nil
    }

    /// `cgpiod_request_release`.
    public func release(_ request: GPIORequestID) {
        guard request.rawValue < requests.count else { return }
        cgpiod_request_release(requests[request.rawValue])
        requests[request.rawValue] = nil
    }

    private func keep(_ request: OpaquePointer) -> GPIORequestID {
        requests.append(request)
        return GPIORequestID(requests.count - 1)
    }

    /// The request error, naming the consumer that holds a busy line.
    private static func requestError(_ location: GPIOLineLocation, errno e: Int32) -> GPIOError {
        var holder: String?
        if e == EBUSY, let chip = try? GPIOChips.describe(path: location.chip.path), location.line.offset < chip.lines.count {
            holder = chip.lines[location.line.offset].consumer
        }
        return .request(line: location.name, location: "\(location.chip.name) line \(location.line.offset)",
                        path: location.chip.path, errno: e, consumer: holder)
    }
}
