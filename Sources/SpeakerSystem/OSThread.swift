// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import CSystemShim

/// A joinable POSIX thread that runs one body: the one place that calls
/// `pthread_create` and carries the body across it as an `Unmanaged` box, so
/// the adapters' worker threads (audio, MQTT network, GPIO edge reader,
/// file read-ahead) start the same way.
///
/// The new thread names itself (`pthread_setname_np`, at most 15 bytes, as
/// `top -H` shows it), asks for `SCHED_FIFO` at `realtimePriority` when one
/// is given (`pthread_setschedparam` on itself, before the body runs), then
/// runs the body with the answer: true when real-time scheduling was
/// granted, false when refused, nil when none was asked for. What the body
/// captures is released on the new thread once the body returns.
///
/// Threads: ``start(name:realtimePriority:_:)`` on the thread that owns the
/// worker; exactly one of ``join()`` or ``detach()`` afterwards, from that
/// same thread and never from the started thread itself (``isCurrent``
/// tells). The value is a plain handle, safe to pass between threads.
public struct OSThread: Sendable {
    /// The name the thread gave itself.
    public let name: String
    private let handle: pthread_t

    /// Starts a thread running `body` (see the type's comment). Throws
    /// `pthread_create`'s error (its result code as `errno`) when no thread
    /// could be made; `body` is then released without running.
    public static func start(name: String, realtimePriority: Int32? = nil,
                             _ body: @escaping @Sendable (_ realtime: Bool?) -> Void) throws(SystemError) -> OSThread {
        let start = ThreadStart(name: name, realtimePriority: realtimePriority, body: body)
        let context = Unmanaged.passRetained(start).toOpaque()
        var handle = pthread_t()
        let rc = pthread_create(&handle, nil, osThreadMain, context)
        guard rc == 0 else {
            Unmanaged<ThreadStart>.fromOpaque(context).release()
            throw SystemError(operation: "pthread_create", errno: rc)
        }
        return OSThread(name: name, handle: handle)
    }

    /// Waits for the body to return (`pthread_join`). The owning thread, once.
    public func join() {
        _ = pthread_join(handle, nil)
    }

    /// Lets the thread finish on its own and free itself (`pthread_detach`),
    /// for a thread stuck in a call that cannot be cut short. The owning thread, once.
    public func detach() {
        _ = pthread_detach(handle)
    }

    /// Whether the calling thread is this one (`pthread_equal`): the body's
    /// last reference can drop on its own thread, where a deinit must not join it.
    public var isCurrent: Bool { pthread_equal(handle, pthread_self()) != 0 }
}

/// What `pthread_create` carries to the new thread: its name, priority and body.
private final class ThreadStart {
    let name: String
    let realtimePriority: Int32?
    let body: @Sendable (Bool?) -> Void

    init(name: String, realtimePriority: Int32?, body: @escaping @Sendable (Bool?) -> Void) {
        self.name = name
        self.realtimePriority = realtimePriority
        self.body = body
    }

    /// Runs on the new thread: name, priority, body.
    func run() {
        _ = csys_name_this_thread(String(name.utf8.prefix(15)) ?? "")
        var realtime: Bool?
        if let priority = realtimePriority {
            var param = sched_param()
            param.sched_priority = priority
            realtime = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0
        }
        body(realtime)
    }
}

/// The pthread entry point: a global function, so it carries no actor
/// isolation into the new thread. `context` is a retained ``ThreadStart``,
/// released here once the body has returned.
private func osThreadMain(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let context else { return nil }
    Unmanaged<ThreadStart>.fromOpaque(context).takeRetainedValue().run()
    return nil
}
