// SPDX-License-Identifier: Apache-2.0
import CALSA
#if canImport(Glibc)
import Glibc
#endif

/// The audio thread's one wait while playing: a single poll(2) over the pcm's
/// poll descriptors (`snd_pcm_poll_descriptors`, ready once a period of room
/// is free: the pcm's `avail_min`) and the request eventfd, so a request
/// queued while the device is full wakes the thread at once instead of after
/// the period a blocking `snd_pcm_writei` would have waited for. The thread
/// then applies the request (rewinding the queue) before it renders, so the
/// change reaches the next period written.
///
/// The descriptor slots are allocated once, when the pcm is opened; `wait`
/// allocates nothing and takes no lock. Audio thread only, after the opening
/// thread has handed it over.
final class DeviceWait: @unchecked Sendable {
    // @unchecked Sendable: built on the opening thread, then used by the audio thread alone.

    /// What ended a wait.
    enum Outcome: Equatable, Sendable {
        /// The device has room for a period (or an error that the next write
        /// will report and recover from).
        case room
        /// The wake descriptor became readable: a request is queued.
        case request
        /// Neither within the timeout.
        case timeout
    }

    /// The pcm whose descriptors these are (its `revents` are demangled through
    /// `snd_pcm_poll_descriptors_revents`); nil: plain descriptors (tests).
    private let pcm: OpaquePointer?
    /// `deviceCount` device slots, then one slot for the wake descriptor.
    private let slots: UnsafeMutablePointer<pollfd>
    /// How many of the slots are the device's (0: it has none to poll).
    let deviceCount: Int

    /// The poll descriptors of `pcm`, read once (`snd_pcm_poll_descriptors`).
    /// A pcm that offers none gives `deviceCount` 0: `wait` then answers
    /// `.room` at once and the write blocks as it would without this wait.
    init(pcm: OpaquePointer) {
        let count = max(0, Int(snd_pcm_poll_descriptors_count(pcm)))
        slots = .allocate(capacity: count + 1)
        slots.initialize(repeating: pollfd(fd: -1, events: 0, revents: 0), count: count + 1)
        let filled = count > 0 ? Int(snd_pcm_poll_descriptors(pcm, slots, UInt32(count))) : 0
        self.pcm = pcm
        deviceCount = max(0, min(filled, count))
    }

    /// Plain descriptors standing for a device (tests): ready when any of them
    /// reports one of its `events`.
    init(descriptors: [pollfd]) {
        slots = .allocate(capacity: descriptors.count + 1)
        slots.initialize(repeating: pollfd(fd: -1, events: 0, revents: 0), count: descriptors.count + 1)
        for (i, d) in descriptors.enumerated() { slots[i] = d }
        pcm = nil
        deviceCount = descriptors.count
    }

    deinit { slots.deallocate() }

    /// Blocks until the device has room, `wake` is readable or `timeoutNanos`
    /// pass (negative: no limit). A readable `wake` wins over room, so a
    /// request is applied before the next period is rendered. `wake` is not
    /// drained here (the caller drains it as it takes the requests).
    func wait(wake: Int32, timeoutNanos: Int64) -> Outcome {
        guard deviceCount > 0 else { return .room }
        for i in 0..<deviceCount { slots[i].revents = 0 }
        slots[deviceCount] = pollfd(fd: wake, events: Int16(POLLIN), revents: 0)
        let ms = timeoutNanos < 0 ? -1 : Int32(clamping: (timeoutNanos + 999_999) / 1_000_000)
        while true {
            let ready = poll(slots, nfds_t(deviceCount + 1), ms)
            if ready < 0 {
                if errno == EINTR { continue }
                return .room  // poll itself failed: let the write block (and report) as before
            }
            if ready == 0 { return .timeout }
            if slots[deviceCount].revents & Int16(POLLIN) != 0 { return .request }
            if deviceReady() { return .room }
            // The pcm's descriptor woke without room (a plugin's spurious
            // wake-up): wait again, with the full timeout.
            for i in 0..<deviceCount { slots[i].revents = 0 }
        }
    }

    /// Whether the device slots say room (or an error) after a poll.
    private func deviceReady() -> Bool {
        let wanted = Int16(POLLOUT | POLLERR | POLLHUP | POLLNVAL)
        guard let pcm else {
            for i in 0..<deviceCount where slots[i].revents & (slots[i].events | Int16(POLLERR | POLLHUP | POLLNVAL)) != 0 {
                return true
            }
            return false
        }
        var revents: UInt16 = 0
        if snd_pcm_poll_descriptors_revents(pcm, slots, UInt32(deviceCount), &revents) < 0 { return true }
        return Int16(bitPattern: revents) & wanted != 0
    }
}
