internal import Glibc

/// Blocking reads and writes on a worker's own pipes (fds 0, 1, 2): the worker has one thread and
/// nothing else to do while it waits.
enum PipeIO {
    /// What ended a read early.
    enum ReadError: Error {
        /// The pipe was closed before the first byte: a clean end of input.
        case endOfInput
        /// The pipe was closed in the middle.
        case truncated(Int)
        case failed(Int32)
    }

    /// Reads exactly `count` bytes from `fd`.
    static func read(_ fd: Int32, count: Int) throws(ReadError) -> [UInt8] {
        var failure: ReadError?
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var filled = 0
            while filled < count {
                let result = Glibc.read(fd, buffer.baseAddress! + filled, count - filled)
                if result > 0 {
                    filled += result
                } else if result == 0 {
                    failure = filled == 0 ? .endOfInput : .truncated(filled)
                    break
                } else if errno != EINTR {
                    failure = .failed(errno)
                    break
                }
            }
            initialized = filled
        }
        if let failure { throw failure }
        return bytes
    }

    /// Writes all of `bytes` to `fd`; false if the pipe failed.
    @discardableResult
    static func write(_ fd: Int32, _ bytes: some Collection<UInt8>) -> Bool {
        let written: Bool? = bytes.withContiguousStorageIfAvailable { buffer in
            var offset = 0
            while offset < buffer.count {
                let result = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if result > 0 {
                    offset += result
                } else if result < 0 && errno == EINTR {
                    continue
                } else {
                    return false
                }
            }
            return true
        }
        return written ?? write(fd, Array(bytes))
    }
}
