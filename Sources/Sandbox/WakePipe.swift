internal import CSeccomp
internal import Glibc

/// A self-pipe that wakes a slot thread from `poll`: for a new document, a cancellation or
/// shutdown. The state that says which lives under the pool's lock; the byte only says "look".
final class WakePipe: Sendable {
    /// The read end, polled by the slot thread; the write end, written by anyone.
    let readEnd: Int32
    private let writeEnd: Int32

    init() throws(SandboxFailure) {
        guard let pipe = Descriptors.pipe(flags: O_NONBLOCK) else {
            throw SandboxFailure(code: .unavailable, reason: "cannot create a pipe: \(ConfinementError(step: "pipe2"))")
        }
        readEnd = pipe.read
        writeEnd = pipe.write
    }

    deinit {
        Descriptors.close(readEnd)
        Descriptors.close(writeEnd)
    }

    /// Wakes the reader. A full pipe already says "look", so EAGAIN is fine.
    func signal() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Empties the pipe, before the reader looks at the state. A read that returns less than it
    /// asked for has emptied the pipe, so one read is enough unless 64 signals piled up.
    func drain() {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { buffer in
            while read(readEnd, buffer.baseAddress, buffer.count) == buffer.count {}
        }
    }
}
