internal import Glibc

/// Keeps the resident memory of a long-running gateway flat under a stream of large messages.
///
/// glibc's malloc serves an allocation above its mmap threshold (128 KiB at start) from an mmap that `free` returns
/// to the kernel at once; but each such `free` raises the threshold to the freed size, up to 32 MiB, so after the
/// first large message the buffers of the next ones (an LMTP message as it is read, up to the 32 MiB limit) come
/// from the heaps of the threads that allocate them and stay resident after they are freed: measured with a 27 MB
/// message over LMTP, 59 MB resident after the first, 109 MB after the third. Setting the threshold fixes it (the
/// documented way to turn the adjustment off, mallopt(3)), and an allocation of 1 MiB or more is then always an mmap
/// of its own: 59 MB after each of them.
enum MallocTuning {
    /// `M_MMAP_THRESHOLD` from <malloc.h>, which Swift's Glibc module does not bring in.
    private static let mmapThreshold: Int32 = -3

    /// Fixes the mmap threshold at 1 MiB. glibc's `mallopt` is looked up at run time (it is not part of the module
    /// Swift imports); another C library without it is left as it is.
    static func fixMmapThreshold() {
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }  // RTLD_DEFAULT
        _ = unsafeBitCast(symbol, to: Mallopt.self)(mmapThreshold, 1 << 20)
    }
}
