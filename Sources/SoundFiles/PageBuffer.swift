// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

/// Memory for the large per-sound buffers (the read-ahead ring, a cached
/// loop) mapped straight from the kernel (`mmap`, anonymous, zero-filled)
/// instead of from malloc, so releasing a sound gives the pages back
/// (`munmap`) rather than leaving a hole in malloc's heap: glibc raises its
/// mmap threshold after the first such free, and later buffers of the same
/// size would otherwise come from the heap and stay resident (private dirty)
/// after a sound switch. Any thread; the owner unmaps it once.
enum PageBuffer {
    /// `count` zeroed elements of `T` in fresh pages; nil when mmap fails.
    static func allocate<T>(_ type: T.Type, count: Int) -> UnsafeMutablePointer<T>? {
        let bytes = max(1, count * MemoryLayout<T>.stride)
        guard let raw = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              raw != MAP_FAILED else { return nil }
        return raw.bindMemory(to: T.self, capacity: count)
    }

    /// Unmaps what `allocate` returned for the same `count`.
    static func free<T>(_ pointer: UnsafeMutablePointer<T>, count: Int) {
        munmap(UnsafeMutableRawPointer(pointer), max(1, count * MemoryLayout<T>.stride))
    }
}
