internal import CSeccomp
internal import Glibc
internal import Synchronization

/// Shared memory through which the gateway hands one worker its documents, instead of the request pipe.
///
/// Through the pipe, a document cost the gateway the pinning of its pages (vmsplice) and the worker a copy out of
/// the pipe page by page and the release of each page: together about twice a plain copy. Through the window the
/// gateway copies the document in (one `memcpy`), the request frame carries only where it lies, and the worker
/// copies it out (another). Measured in C on this project's machine, one document in flight between two processes
/// on one CPU as the pool places them: 13.8 ms of CPU for 50 MB by vmsplice against 10.6 ms through a window; and
/// by `gateway-bench extract`, ten runs alternating with the build before: the sandbox's cost over in-process a median
/// of +16.4% against +17.8% (the worker 3–4 ms a pass cheaper, the gateway 1–2 ms dearer: its copy).
///
/// The memory is a sealed memfd: the gateway maps it read-write before sealing it against writers
/// (`F_SEAL_FUTURE_WRITE`), so the worker, which maps the same file from fd 3 before confining itself, can map it
/// only read-only, and can neither write to it, nor resize it. A compromised worker sees the documents of its own
/// batches, which it is sent anyway, and nothing of the gateway's. A kernel or system without memfds or seals gets
/// no window and the pipe as before.
///
/// Who writes when: the slot thread copies a batch in before writing its requests, and a task handing a request to
/// an idle worker (`PoolCore.handOff`, under the pool's lock) copies it in while the slot thread waits idle; neither
/// happens before the worker answered every document it was given, so the worker never reads a document that is
/// being replaced. Each worker has its own window, gone with it.
final class DocumentWindow: @unchecked Sendable {
    /// The window's size in bytes: a document larger than this goes through the pipe.
    let size: Int
    /// The gateway's mapping (read-write).
    private let base: UnsafeMutableRawPointer
    /// The memfd, passed to the worker as `workerDescriptor` when it is spawned and closed then (`closeDescriptor`):
    /// the mapping stays. -1 once closed.
    private(set) var descriptor: Int32

    /// Where the worker finds the window's file when it starts.
    static let workerDescriptor: Int32 = 3
    /// The size of each worker's window: more than a batch (a batch fits the 1 MiB request pipe) and the documents
    /// most senders send. Pages are allocated as documents first touch them, and freed with the worker.
    static let defaultSize = 4 << 20
    /// Documents in a batch start on a cache line each.
    static let alignment = 64

    private init(size: Int, base: UnsafeMutableRawPointer, descriptor: Int32) {
        self.size = size
        self.base = base
        self.descriptor = descriptor
    }

    deinit {
        munmap(base, size)
        Descriptors.close(descriptor)
    }

    /// Closes the memfd once the worker has its copy of it: the gateway keeps only its mapping.
    func closeDescriptor() {
        Descriptors.close(descriptor)
        descriptor = -1
    }

    /// A new window of `size` bytes, or nil where the system cannot make one (no memfd, no seals, no memory).
    static func create(size: Int = defaultSize) -> DocumentWindow? {
        guard size > 0 else { return nil }
        let memory = csandbox_memfd_create("gateway-documents")
        guard memory >= 0 else { return nil }
        // Above fd 3, like the pipes: the spawn's dup2 onto fd 3 then always clears close-on-exec.
        let descriptor = csandbox_dup_cloexec_above(memory, DocumentWindow.workerDescriptor + 1)
        Glibc.close(memory)
        guard descriptor >= 0 else { return nil }
        guard ftruncate(descriptor, off_t(size)) == 0,
            let base = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0),
            base != UnsafeMutableRawPointer(bitPattern: -1)  // MAP_FAILED
        else {
            Glibc.close(descriptor)
            return nil
        }
        guard csandbox_seal_against_writers(descriptor) == 0 else {
            munmap(base, size)
            Glibc.close(descriptor)
            return nil
        }
        Descriptors.openCount.add(1, ordering: .relaxed)
        return DocumentWindow(size: size, base: base, descriptor: descriptor)
    }

    /// Copies `document` into the window at `offset`; the caller checked that it fits (`place`).
    func copy(_ document: [UInt8], to offset: Int) {
        precondition(offset >= 0 && offset + document.count <= size, "a document placed outside its window")
        document.withUnsafeBytes { bytes in
            guard let source = bytes.baseAddress else { return }
            (base + offset).copyMemory(from: source, byteCount: bytes.count)
        }
    }

    /// Where a document of `count` bytes goes when the window's free part starts at `offset`, or nil when it does not
    /// fit; `offset` then moves past it.
    func place(_ count: Int, at offset: inout Int) -> Int? {
        let start = offset
        guard start + count <= size else { return nil }
        let alignment = DocumentWindow.alignment
        offset = min(size, (start + count + alignment - 1) / alignment * alignment)
        return start
    }
}
