import Foundation
import Glibc
import Markup
import Testing

@testable import Sandbox

extension WorkerProcessTests {
    /// Documents reach a worker through its document window (shared memory the gateway writes and the worker may only
    /// read), or through the request pipe when they do not fit.
    @Suite("Document window")
    struct DocumentWindowTests {
        /// The probe's "digest": the document's length and FNV-1a hash.
        static func digest(_ document: [UInt8]) -> String {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in document { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            return "probe.digest-\(document.count)-\(String(hash, radix: 16))"
        }

        /// "digest " and then `count` bytes of noise (every byte value, the pipe and the window carry bytes as they are).
        static func document(_ count: Int, seed: UInt64) -> [UInt8] {
            var state = seed
            var bytes = Array("digest ".utf8)
            bytes.reserveCapacity(bytes.count + count)
            for _ in 0..<count {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                bytes.append(UInt8(truncatingIfNeeded: state >> 56))
            }
            return bytes
        }

        static func answer(_ result: Result<MarkupGraph, SandboxFailure>) -> String? {
            result.value?.diagnostics.first?.code.rawValue
        }

        /// Sizes on both sides of what a window holds: empty, small, a batch's worth, just under and over the window.
        static let sizes = [
            0, 1, 63, 64, 4_000, 70_000, 600_000, DocumentWindow.defaultSize - 7 - 64,
            DocumentWindow.defaultSize - 7, DocumentWindow.defaultSize, DocumentWindow.defaultSize + 5_000, 9 << 20,
        ]

        @Test(
            "documents of every size arrive intact, one at a time (handed to the idle worker) and many at once (batches)"
        )
        func documentsArriveIntact() async throws {
            try await withWorkerPool(configuration: .probe(workers: 1)) { pool in
                #expect(Self.answer(await pool.probe("window")) == "probe.window-\(DocumentWindow.defaultSize)")
                for (index, size) in Self.sizes.enumerated() {
                    let document = Self.document(size, seed: UInt64(index))
                    #expect(
                        Self.answer(await pool.extract(document, kind: .html, deadline: .seconds(10)))
                            == Self.digest(document), "alone, \(size) bytes")
                }
                // Concurrently: small ones go in batches through the window, each at its own offset, and the large
                // ones through the pipe beside them.
                let documents = (0..<48).map {
                    Self.document(Self.sizes[$0 % Self.sizes.count] % 300_000, seed: 100 + UInt64($0))
                }
                let answers = await withTaskGroup(of: (Int, String?).self) { group in
                    for (index, document) in documents.enumerated() {
                        group.addTask {
                            (index, Self.answer(await pool.extract(document, kind: .html, deadline: .seconds(10))))
                        }
                    }
                    var answers = [String?](repeating: nil, count: documents.count)
                    for await (index, answer) in group { answers[index] = answer }
                    return answers
                }
                #expect(answers == documents.map(Self.digest))
                #expect((pool.workers.first?.largestBatch ?? 0) > 1)
                #expect(pool.workers.first?.restarts == 0)
            }
        }

        @Test("the worker can only read its window: a write crashes it, its file cannot be mapped again")
        func windowIsReadOnlyForTheWorker() async throws {
            try await withWorkerPool(configuration: .probe(workers: 1)) { pool in
                let written = await pool.probe("write-window")
                #expect(written.failureCode == .crashed)
                #expect(written.failure?.reason.contains("SIGSEGV") == true)
                // fd 3 was closed when the worker confined itself (EBADF).
                #expect(Self.answer(await pool.probe("map-window")) == "probe.errno-\(EBADF)")
                // The replacement has a window of its own, and works.
                let document = Self.document(10_000, seed: 7)
                let answer = Self.answer(await pool.extract(document, kind: .html, deadline: .seconds(5)))
                #expect(answer == Self.digest(document))
            }
        }

        @Test("the window's file is sealed: no one maps it writable again, writes to it or resizes it")
        func windowIsSealed() throws {
            let window = try #require(DocumentWindow.create(size: 1 << 20))
            let mapped = mmap(nil, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, window.descriptor, 0)
            #expect(mapped == UnsafeMutableRawPointer(bitPattern: -1))
            #expect(errno == EPERM)
            #expect(write(window.descriptor, "x", 1) == -1)
            #expect(ftruncate(window.descriptor, 2 << 20) == -1)
            // Read-only mappings work, and see what the gateway copied in.
            window.copy(Array("hello".utf8), to: 128)
            let reader = try #require(mmap(nil, 1 << 20, PROT_READ, MAP_SHARED, window.descriptor, 0))
            #expect(reader != UnsafeMutableRawPointer(bitPattern: -1))
            #expect(Array(UnsafeRawBufferPointer(start: reader + 128, count: 5)) == Array("hello".utf8))
            munmap(reader, 1 << 20)
        }

        @Test("documents of a batch lie one after another, each on a cache line; one that does not fit is not placed")
        func placement() throws {
            let window = try #require(DocumentWindow.create(size: 4096))
            var free = 0
            #expect(window.place(100, at: &free) == 0)
            #expect(free == 128)
            #expect(window.place(0, at: &free) == 128)
            #expect(free == 128)
            #expect(window.place(3968, at: &free) == 128)
            #expect(free == 4096)
            #expect(window.place(1, at: &free) == nil)
            #expect(free == 4096)
            var again = 0
            #expect(window.place(4097, at: &again) == nil)
            #expect(again == 0)
        }
    }
}
