internal import CSeccomp
internal import FoundationEssentials
internal import Glibc
package import Markup

/// The main loop of a worker process: read the setup frame, confine, say ready, then read a
/// request, extract, answer, for as long as the gateway keeps the pipe open.
///
/// The worker executable supplies the extraction (`handler`), so this loop and `Confinement` are
/// the same in the gateway's worker and in the test probe. Nothing here starts a thread: the
/// process is single-threaded from `main` to exit, as the seccomp filter and a user namespace need.
package enum WorkerMain {
    /// Runs the worker on fds 0 (requests), 1 (answers) and 2 (diagnostics).
    ///
    /// - Parameters:
    ///   - prepare: runs after the setup frame and before confinement: the last chance to load
    ///     what needs files (iconv converters, libxml2's initialisation).
    ///   - handler: turns one request into a graph. It runs confined: it must not open files,
    ///     create threads or processes, or touch the network.
    /// - Returns: the process's exit status (`WorkerExitStatus`).
    package static func run(prepare: () -> Void = {}, handler: (ExtractionRequest) -> MarkupGraph) -> Int32 {
        let setup: WorkerSetup
        do {
            setup = try readSetup()
        } catch {
            complain("no valid setup frame: \(error)")
            return WorkerExitStatus.badSetup
        }

        prepare()
        keepHeap()
        // The document window, mapped read-only before confinement closes fd 3 (the gateway sealed it against
        // writable mappings: this is the only way the worker can see it).
        var window: UnsafeRawBufferPointer?
        if setup.documentWindowBytes > 0 {
            guard
                let base = mmap(
                    nil, setup.documentWindowBytes, PROT_READ, MAP_SHARED, DocumentWindow.workerDescriptor, 0),
                base != UnsafeMutableRawPointer(bitPattern: -1)  // MAP_FAILED
            else {
                complain("cannot map the document window: \(ConfinementError(step: "mmap"))")
                return WorkerExitStatus.badSetup
            }
            window = UnsafeRawBufferPointer(start: base, count: setup.documentWindowBytes)
            WorkerMain.documentWindow = window
        }
        let probeBytes = Int(clamping: max(setup.confinement.addressSpaceBytes / 8, 1 << 20))
        guard csandbox_install_fault_handler(WorkerExitStatus.memoryLimit, probeBytes, 64 << 10) == 0 else {
            complain("cannot install the fault handler: \(ConfinementError(step: "sigaction"))")
            return WorkerExitStatus.confinementFailed
        }
        let report: Confinement.Report
        do {
            report = try Confinement.apply(setup.confinement)
        } catch {
            complain("confinement failed: \(error)")
            return WorkerExitStatus.confinementFailed
        }

        let encoder = JSONEncoder()
        guard let ready = try? encoder.encode(report),
            PipeIO.write(1, Frame(kind: .ready, payload: Array(ready)).bytes)
        else { return WorkerExitStatus.ioError }

        let maxPayload =
            ExtractionRequest.fixedPayloadSize + ExtractionRequest.maxEncodingBytes + setup.maxDocumentBytes
        while true {
            let request: ExtractionRequest
            do {
                // The header and the request's fixed fields in one read: the gateway only ever sends requests.
                let head = try PipeIO.read(0, count: Frame.headerSize + ExtractionRequest.fixedPayloadSize)
                let (kind, length) = try Frame.parseHeader(head[..<Frame.headerSize], maxPayload: maxPayload)
                guard kind == .request || (kind == .windowRequest && window != nil),
                    length >= ExtractionRequest.fixedPayloadSize
                else {
                    complain("expected a request frame, got \(kind) of \(length) bytes")
                    return WorkerExitStatus.protocolError
                }
                let fields = try ExtractionRequest.parseFixedFields(head[Frame.headerSize...])
                let rest = length - ExtractionRequest.fixedPayloadSize
                guard rest >= fields.encodingLength else {
                    complain("a request frame ends inside its encoding label")
                    return WorkerExitStatus.protocolError
                }
                let encoding =
                    fields.encodingLength == 0
                    ? nil : try ExtractionRequest.parseEncoding(PipeIO.read(0, count: fields.encodingLength))
                let document: [UInt8]
                if kind == .windowRequest, let window {
                    let place = try ExtractionRequest.parseWindowPlace(
                        PipeIO.read(0, count: rest - fields.encodingLength))
                    guard place.length <= setup.maxDocumentBytes, place.offset <= window.count - place.length else {
                        complain("a document placed outside the window: \(place.length) bytes at \(place.offset)")
                        return WorkerExitStatus.protocolError
                    }
                    document = Array(
                        UnsafeRawBufferPointer(rebasing: window[place.offset..<(place.offset + place.length)]))
                } else {
                    document = try PipeIO.read(0, count: rest - fields.encodingLength)
                }
                request = ExtractionRequest(
                    id: fields.id, kind: fields.kind, encoding: encoding, limits: fields.limits, document: document)
            } catch PipeIO.ReadError.endOfInput {
                return WorkerExitStatus.finished
            } catch {
                complain("unreadable request: \(error)")
                return WorkerExitStatus.protocolError
            }

            let graph = handler(request)
            let answer: [UInt8]
            if let frame = WorkerAnswer.graphFrame(
                id: request.id, graph: graph, maxBytes: Int(request.limits.maxResponseBytes))
            {
                answer = frame
            } else {
                answer = WorkerAnswer.failureFrame(
                    id: request.id, code: .tooLarge,
                    reason: "the extracted graph exceeds the answer limit of \(request.limits.maxResponseBytes) bytes")
            }
            guard PipeIO.write(1, answer) else { return WorkerExitStatus.ioError }
        }
    }

    /// The document window as this worker mapped it (read-only), nil without one: for the test probe, which proves
    /// that a worker cannot write to it. Set once, before the first request, in a process with one thread.
    nonisolated(unsafe) package private(set) static var documentWindow: UnsafeRawBufferPointer?

    /// Blocks up to this size come from malloc's heap rather than an mmap of their own.
    static let heapBlockLimit: Int32 = 4 << 20
    /// Free memory at the heap's top beyond this goes back to the kernel.
    static let heapTrimThreshold: Int32 = 16 << 20

    /// Keeps the memory one document freed for the next (mallopt(3): no system call, nothing added
    /// to the filter). By default glibc gives the heap's top back after each document (brk) and serves
    /// blocks above its mmap threshold with an mmap each, so every document paid again for its pages:
    /// faults, zeroing, unmapping, about a tenth of the worker's CPU time (`gateway-bench extract`,
    /// worker CPU per pass 0.288 s before, 0.258 s after). The address space limit still bounds the
    /// whole; between documents a worker keeps at most `heapTrimThreshold` of free memory resident.
    /// Best effort: another C library keeps its own ways.
    private static func keepHeap() {
        _ = csandbox_keep_heap(heapBlockLimit, heapTrimThreshold)
    }

    private static func readSetup() throws -> WorkerSetup {
        let header = try PipeIO.read(0, count: Frame.headerSize)
        let (kind, length) = try Frame.parseHeader(header, maxPayload: WorkerSetup.maxFrameBytes)
        guard kind == .setup else { throw FrameError("the first frame is \(kind), not setup") }
        return try JSONDecoder().decode(WorkerSetup.self, from: Data(try PipeIO.read(0, count: length)))
    }

    /// A line on stderr, which the gateway keeps (the tail) for the failure's reason.
    private static func complain(_ message: String) {
        PipeIO.write(2, Array("gateway-worker: \(message)\n".utf8))
    }
}
