import Synchronization

/// Message buffers kept between transactions, up to `retainedBytes` of capacity in all, so that a message is
/// received into memory the process has already touched.
///
/// A fresh buffer for a large message is mapped by the allocator and faulted in a page at a time as the message
/// is written (measured on the mixed stream: page faults and zeroing were a quarter of the server's CPU, as much
/// as the copy itself), then unmapped when the message is dropped. A buffer the delivery handler kept (spooled
/// mail keeps its bytes) is not returned. The bound is what the pool adds to resident memory, whatever the load.
final class MessageBufferPool: Sendable {
    private struct Pooled {
        var buffers: [[UInt8]] = []
        var bytes = 0
    }

    private let pooled = Mutex(Pooled())
    /// The most capacity kept, in octets.
    let retainedBytes: Int

    init(retainedBytes: Int) {
        self.retainedBytes = retainedBytes
    }

    /// An empty buffer: the smallest kept one with at least `minimumCapacity` (the largest when that is 0, the size
    /// being unknown), or a new empty one when none fits.
    func take(minimumCapacity: Int) -> [UInt8] {
        pooled.withLock { pooled in
            var chosen: Int?
            for (index, buffer) in pooled.buffers.enumerated() {
                let capacity = buffer.capacity
                guard let current = chosen else {
                    if minimumCapacity == 0 || capacity >= minimumCapacity { chosen = index }
                    continue
                }
                let best = pooled.buffers[current].capacity
                if minimumCapacity == 0 ? capacity > best : (capacity >= minimumCapacity && capacity < best) {
                    chosen = index
                }
            }
            guard let chosen else { return [] }
            let buffer = pooled.buffers.remove(at: chosen)
            pooled.bytes -= buffer.capacity
            return buffer
        }
    }

    /// Takes `message`'s buffer (leaving `message` empty) and keeps it for a later message if nothing else refers to
    /// it and it fits in `retainedBytes`, making room by dropping smaller buffers.
    func recycle(_ message: inout [UInt8]) {
        var buffer: [UInt8] = []
        swap(&buffer, &message)
        let before = buffer.withUnsafeBufferPointer { $0.baseAddress }
        buffer.removeAll(keepingCapacity: true)
        let capacity = buffer.capacity
        // Shared storage (the handler kept the message) gets a new allocation here: not worth keeping.
        guard capacity > 0, capacity <= retainedBytes, buffer.withUnsafeBufferPointer({ $0.baseAddress }) == before
        else { return }
        pooled.withLock { pooled in
            let smaller = pooled.buffers.reduce(0) { $1.capacity < capacity ? $0 + $1.capacity : $0 }
            guard pooled.bytes - smaller + capacity <= retainedBytes else { return }
            while pooled.bytes + capacity > retainedBytes {
                guard let smallest = pooled.buffers.indices.min(by: { pooled.buffers[$0].capacity < pooled.buffers[$1].capacity })
                else { return }
                pooled.bytes -= pooled.buffers.remove(at: smallest).capacity
            }
            pooled.buffers.append(buffer)
            pooled.bytes += capacity
        }
    }
}
