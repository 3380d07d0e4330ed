import Foundation
import Markup
import Sandbox
import Testing

extension WorkerProcessTests {
    /// The production worker (gateway-worker) on real documents: the same graph as in-process
    /// extraction, charsets decoded under the filter, and hostile shapes answered with their
    /// diagnostics while the pool carries on.
    @Suite("Sandboxed extraction")
    struct SandboxedExtractionTests {
        let inProcess = InProcessExtractor(unconfined: DocumentExtraction())

        /// An email with one text/html part.
        static func email(html: [UInt8], charset: String, transferEncoding: String = "8bit") -> [UInt8] {
            Array(
                ("From: a@example.com\r\nTo: b@example.com\r\nSubject: booking\r\nMIME-Version: 1.0\r\n"
                    + "Content-Type: multipart/alternative; boundary=\"XX\"\r\n\r\n"
                    + "--XX\r\nContent-Type: text/plain\r\n\r\n"
                    + "hello\r\n--XX\r\nContent-Type: text/html; charset=\(charset)\r\n"
                    + "Content-Transfer-Encoding: \(transferEncoding)\r\n\r\n").utf8) + html
                + Array("\r\n--XX--\r\n".utf8)
        }

        static let restaurantHTML = #"""
            <html><body><script type="application/ld+json">{"@context":"https://schema.org",
            "@type":"FoodEstablishmentReservation","reservationNumber":"OT12345","underName":{"@type":"Person",
            "name":"NAME"},"reservationFor":{"@type":"FoodEstablishment","name":"Wagamama"}}</script></body></html>
            """#

        /// The restaurant page with `name` in windows-1252 (é = 0xE9, Å = 0xC5, ö = 0xF6).
        static let windows1252HTML: [UInt8] = {
            let parts = restaurantHTML.components(separatedBy: "NAME")
            return Array(parts[0].utf8) + [0x4A, 0x6F, 0x73, 0xE9, 0x20, 0xC5, 0x73, 0x74, 0x72, 0xF6, 0x6D]
                + Array(parts[1].utf8)
        }()

        @Test(
            "every corpus page gives the same graph in a worker as in-process",
            .enabled(if: !corpusInputs.isEmpty, "shared/corpus/markup is absent"))
        func corpusMatchesInProcess() async throws {
            try await withWorkerPool(configuration: .worker()) { pool in
                let sandboxed = SandboxedExtractor(pool: pool)
                let results = await withTaskGroup(of: (String, Bool).self) { group in
                    for input in corpusInputs {
                        group.addTask {
                            let inWorker = await sandboxed.extract(input.bytes, kind: .html, deadline: .seconds(10))
                            let direct = await inProcess.extract(input.bytes, kind: .html, deadline: .seconds(10))
                            return (input.name, inWorker.value != nil && inWorker.value == direct.value)
                        }
                    }
                    return await group.reduce(into: [String: Bool]()) { $0[$1.0] = $1.1 }
                }
                #expect(results.count == corpusInputs.count)
                #expect(results.filter { !$0.value }.keys.sorted() == [])
                #expect(pool.workers.map(\.restarts) == [0, 0])
            }
        }

        @Test("an email in quoted-printable windows-1252 is decoded under the filter (iconv loaded beforehand)")
        func windows1252Email() async throws {
            var quoted: [UInt8] = []
            for byte in SandboxedExtractionTests.windows1252HTML {
                if byte >= 0x80 || byte == UInt8(ascii: "=") {
                    quoted += Array("=\(String(byte, radix: 16, uppercase: true))".utf8)
                } else {
                    quoted.append(byte)
                }
            }
            let message = SandboxedExtractionTests.email(
                html: quoted, charset: "windows-1252", transferEncoding: "quoted-printable")
            try await withWorkerPool(configuration: .worker(workers: 1)) { pool in
                let graph = try #require(await pool.extract(message, kind: .email, deadline: .seconds(10)).value)
                #expect(graph == (await inProcess.extract(message, kind: .email, deadline: .seconds(10))).value)
                let person = graph.nodes.first?.values("underName").first?.node
                #expect(person?.values("name").first?.text == "José Åström")
                #expect(graph.diagnostics.isEmpty)
            }
        }

        @Test("a page in windows-1252 declared by the transport is decoded with that charset")
        func declaredEncoding() async throws {
            try await withWorkerPool(configuration: .worker(workers: 1)) { pool in
                let page = SandboxedExtractionTests.windows1252HTML
                let graph = try #require(
                    await pool.extract(page, kind: .html, encoding: "windows-1252", deadline: .seconds(10)).value)
                let person = graph.nodes.first?.values("underName").first?.node
                #expect(person?.values("name").first?.text == "José Åström")
                let direct = await inProcess.extract(
                    page, kind: .html, encoding: "windows-1252", deadline: .seconds(10))
                #expect(graph == direct.value)
            }
        }

        @Test("a charset whose converter was not loaded fails softly: a warning, and the worker lives on")
        func unloadedCharset() async throws {
            let ebcdic: [UInt8] = [0xC8, 0x85, 0x93, 0x93, 0x96]  // "Hello" in IBM037
            let message = SandboxedExtractionTests.email(html: ebcdic, charset: "IBM037")
            try await withWorkerPool(configuration: .worker(workers: 1)) { pool in
                let processID = pool.workers.first?.processID
                let graph = try #require(await pool.extract(message, kind: .email, deadline: .seconds(10)).value)
                #expect(graph.diagnostics.map(\.code.rawValue).contains("mime.unknown-charset"))  // openat refused
                #expect(pool.workers.first?.processID == processID)
                #expect(pool.workers.first?.restarts == 0)
            }
        }

        @Test("a million nested elements, or JSON nested a million deep, get their diagnostic; others complete")
        func deepNesting() async throws {
            let elements = Array(("<html><body>" + String(repeating: "<div>", count: 1_000_000)).utf8)
            let arrays =
                Array(#"<script type="application/ld+json">"#.utf8) + [UInt8](repeating: 0x5B, count: 1_000_000)
                + Array("</script>".utf8)
            let page = Array(SandboxedExtractionTests.restaurantHTML.utf8)
            try await withWorkerPool(configuration: .worker()) { pool in
                async let others = withTaskGroup(of: Bool.self) { group in
                    for _ in 0..<6 {
                        group.addTask {
                            await pool.extract(page, kind: .html, deadline: .seconds(10)).value?.nodes.count == 1
                        }
                    }
                    return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
                }
                let deepElements = try #require(await pool.extract(elements, kind: .html, deadline: .seconds(20)).value)
                #expect(deepElements.diagnostics.map(\.code.rawValue) == ["markup.document-too-deep"])
                let deepJSON = try #require(await pool.extract(arrays, kind: .html, deadline: .seconds(20)).value)
                #expect(deepJSON.diagnostics.map(\.code.rawValue) == ["markup.json-too-deep"])
                #expect(await others == 6)
                #expect(pool.workers.map(\.restarts) == [0, 0])
            }
        }

        @Test("a 50 MB page: sandbox.too-large by default; past a raised limit, the extractor's own diagnostic")
        func fiftyMegabytePage() async throws {
            let page = Array("<html><body>".utf8) + [UInt8](repeating: 0x61, count: 50_000_000)
            try await withWorkerPool(configuration: .worker(workers: 1)) { pool in
                #expect(await pool.extract(page, kind: .html, deadline: .seconds(10)).failureCode == .tooLarge)
            }
            try await withWorkerPool(configuration: .worker(workers: 1, maxDocumentBytes: 64 << 20)) { pool in
                let graph = try #require(await pool.extract(page, kind: .html, deadline: .seconds(10)).value)
                #expect(graph.diagnostics.map(\.code.rawValue) == ["markup.document-too-large"])
            }
        }

        @Test("a document that is not a message gets mail.not-a-message, in a worker as in-process")
        func notAMessage() async throws {
            let bytes = Array("no header here".utf8)
            try await withWorkerPool(configuration: .worker(workers: 1)) { pool in
                let graph = try #require(await pool.extract(bytes, kind: .email, deadline: .seconds(10)).value)
                #expect(graph.diagnostics.map(\.code.rawValue) == ["mail.not-a-message"])
                #expect(graph == (await inProcess.extract(bytes, kind: .email, deadline: .seconds(10))).value)
            }
        }
    }
}
