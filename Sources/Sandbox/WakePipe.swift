internal import CSeccomp
internal import Glibc

/// A self-pipe that wakes a slot thread from `poll`: for a new document, a cancellation or
/// shutdown. The state that says which lives under the pool's lock; the byte only says "look".
final class WakePipe: Sendable {
    /// The read end, polled by the slot thread; the write end, written by anyone.
    let readEnd: Int32
    private let writeEnd: Int32

    init() throws(SandboxFailure) {
        var fds: [Int32] = [-1, -1]
        guard csandbox_pipe2(&fds, O_CLOEXEC | O_NONBLOCK) == 0 else {
            throw SandboxFailure(code: .unavailable, reason: "cannot create a pipe: \(ConfinementError(step: "pipe2"))")
        }
        readEnd = fds[0]
        writeEnd = fds[1]
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// Wakes the reader. A full pipe already says "look", so EAGAIN is fine.
    func signal() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Empties the pipe, before the reader looks at the state.
    func drain() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(readEnd, &buffer, buffer.count) > 0 {}
    }
}
