import Foundation
import GatewayServer
import Hummingbird
import Ingestion
import Markup
import Sandbox
import SQLiteStore
import Store
import Testing

/// The email path says, past the prefilter, that it will probably write (`GatewayStore.expectingIngestion`): a lone
/// ingestion's commit then waits for it instead of paying an fsync of its own (``GroupCommit/linger``).
@Suite("Ingestion commits")
struct IngestionCommitTests {
    /// Extraction that says when a document reached it, then waits for a signal.
    struct GatedExtractor: Extractor {
        let entered: AsyncStream<Void>.Continuation
        let release: AsyncStream<Void>
        let inner = InProcessExtractor(unconfined: DocumentExtraction())

        func extract(
            _ document: [UInt8], kind: DocumentKind, encoding: String?, deadline: Duration
        ) async -> Result<MarkupGraph, SandboxFailure> {
            entered.yield()
            for await _ in release { break }
            return await inner.extract(document, kind: kind, encoding: encoding, deadline: deadline)
        }
    }

    @Test func aLoneWriteWaitsForAnEmailBeingExtractedAndTheyShareACommit() async throws {
        let (entered, enteredContinuation) = AsyncStream.makeStream(of: Void.self)
        let release = AsyncStream.makeStream(of: Void.self)
        var configuration = SQLiteStore.Configuration()
        configuration.commitLinger = .seconds(30)
        let fixture = try await ServerFixture(
            extractor: GatedExtractor(entered: enteredContinuation, release: release.stream), store: configuration)
        let ingestor = fixture.services.ingestor
        let flight = try ServerFixture.example("flight-two-passengers.eml")
        let email = Task { try await ingestor.ingestEmail(flight, source: "flight-two-passengers.eml") }
        for await _ in entered { break }

        // Another ingestion's write while the email is in extraction: it waits for the email's.
        let lone = Task {
            try await fixture.store.ingest([], decision: DecisionLogEntry(
                time: Date(), channel: .http, sourceDomain: "other.example", source: "lone", owners: [],
                contentHash: String(repeating: "0", count: 64), verdict: .rejected, codes: ["test.lone"], flags: []))
        }
        let deadline = ContinuousClock.now + .seconds(20)
        while fixture.store.commitLingers?.began == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        try #require(fixture.store.commitLingers?.began == 1, "the lone write waits for the email on its way")
        release.continuation.yield()
        let report = try await email.value
        let logged = try await lone.value
        #expect(report.logID != nil && logged.id != nil && report.logID != logged.id)
        let lingers = try #require(fixture.store.commitLingers)
        #expect(lingers.began == 1 && lingers.joined == 1 && lingers.noneLeft == 0 && lingers.timedOut == 0)

        // Mail without markup never says it will write: a lone write does not wait for it.
        _ = try await ingestor.ingestEmail(Array("From: a@b.example\r\nSubject: hi\r\n\r\nhello\r\n".utf8), source: "plain")
        #expect(fixture.store.commitLingers?.began == 1)

        // Operators see the lingers at /metrics.
        try await fixture.test { client in
            let metrics = try await client.call(.get, "/metrics", token: nil).text
            #expect(metrics.contains(#"gateway_store_commit_lingers_total{end="joined"} 1"#))
            #expect(metrics.contains(#"gateway_store_commit_lingers_total{end="timed-out"} 0"#))
            #expect(metrics.contains("gateway_store_commit_linger_seconds_total "))
        }
    }
}
