import CoreMetrics
package import Ingestion
import Metrics
package import Store
package import Prometheus
import Synchronization

/// The server's metrics, in the Prometheus text format at `/metrics`: recorded through swift-metrics against this
/// instance's own registry (no process-wide bootstrap, so each server and each test has its own numbers).
///
/// Labels take stable codes only (the part before any property path), so their number stays bounded.
package final class GatewayMetrics: Sendable {
    package let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    private let sandboxRestartsSeen = Mutex(0)
    private let commitLingersSeen = Mutex(CommitLingerStatistics())

    package init() {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        // Ingestion latencies from 1 ms to 30 s.
        factory.defaultDurationHistogramBuckets = [
            .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(20), .milliseconds(50),
            .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(5),
            .seconds(10), .seconds(30),
        ]
        self.factory = factory
    }

    /// One ingestion: its verdict and codes, its DKIM result, how long it took. A message the prefilter found no
    /// markup in was not ingested: it is counted by ``recordPrefilter(channel:hasMarkup:)`` only.
    package func recordIngestion(_ report: IngestionReport, channel: String, duration: Duration) {
        guard !report.isWithoutMarkup else { return }
        Counter(
            label: "gateway_ingestions_total", dimensions: [("channel", channel), ("verdict", report.verdict.rawValue)],
            factory: factory
        ).increment()
        for code in Set(report.codes.map(Self.stableCode)) {
            Counter(label: "gateway_refusals_total", dimensions: [("channel", channel), ("code", code)], factory: factory)
                .increment()
        }
        if let dkim = report.dkim {
            Counter(label: "gateway_dkim_results_total", dimensions: [("result", dkim)], factory: factory).increment()
        }
        Timer(label: "gateway_ingestion_duration_seconds", dimensions: [("channel", channel)], factory: factory)
            .recordNanoseconds(Self.nanoseconds(duration))
    }

    /// One message through the markup prefilter: with evidence of markup (it goes on to DKIM and extraction) or
    /// without (answered at once, and counted only here).
    package func recordPrefilter(channel: String, hasMarkup: Bool) {
        Counter(
            label: "gateway_prefilter_total", dimensions: [("channel", channel), ("result", hasMarkup ? "markup" : "none")],
            factory: factory
        ).increment()
    }

    /// One HTTP request, by route pattern (never the raw path, which holds owners and references).
    package func recordRequest(method: String, route: String, status: Int, duration: Duration) {
        Counter(
            label: "gateway_http_requests_total",
            dimensions: [("method", method), ("route", route), ("status", String(status))], factory: factory
        ).increment()
        Timer(label: "gateway_http_request_duration_seconds", dimensions: [("route", route)], factory: factory)
            .recordNanoseconds(Self.nanoseconds(duration))
    }

    /// One LMTP per-recipient reply, by its code.
    package func recordLMTPReply(code: Int) {
        Counter(label: "gateway_lmtp_replies_total", dimensions: [("code", String(code))], factory: factory).increment()
    }

    /// A submission refused because the queue was full.
    package func recordBusy(channel: String) {
        Counter(label: "gateway_busy_refusals_total", dimensions: [("channel", channel)], factory: factory).increment()
    }

    /// A submission refused because a quota was used up (`quota.domain-messages`, ...), by scope and metric.
    package func recordQuotaRefusal(_ refusal: QuotaRefusal, channel: String) {
        Counter(
            label: "gateway_quota_refusals_total",
            dimensions: [
                ("channel", channel), ("scope", refusal.key.scope.rawValue), ("metric", refusal.key.metric.rawValue),
            ], factory: factory
        ).increment()
    }

    /// What the quotas counted, by scope and metric (messages, reservations, bytes), across every subject.
    package func recordQuotaUse(_ charges: [QuotaCharge]) {
        for charge in charges where charge.amount > 0 {
            Counter(
                label: "gateway_quota_counted_total",
                dimensions: [("scope", charge.key.scope.rawValue), ("metric", charge.key.metric.rawValue)],
                factory: factory
            ).increment(by: Int(clamping: charge.amount))
        }
    }

    /// One periodic re-check of a domain's proof of control, by its result (found, missing, failed).
    package func recordDomainCheck(result: String) {
        Counter(label: "gateway_domain_checks_total", dimensions: [("result", result)], factory: factory).increment()
    }

    /// Brings the sandbox restart counter up to `total` (the pool's own count since it started).
    package func observeSandboxRestarts(total: Int) {
        let delta = sandboxRestartsSeen.withLock { seen -> Int in
            defer { seen = max(seen, total) }
            return max(0, total - seen)
        }
        let counter = Counter(label: "gateway_sandbox_restarts_total", factory: factory)
        if delta > 0 { counter.increment(by: delta) }
    }

    /// Brings the store's commit-linger counters up to `total` (the store's own since it opened; nil for a store
    /// without group commit): `gateway_store_commit_lingers_total` by how each linger ended (`joined`: it shared its
    /// commit with the ingestion it waited for; `none-left`: that one had nothing to write; `timed-out`), and
    /// `gateway_store_commit_linger_seconds_total`, the time commits waited.
    package func observeCommitLingers(total: CommitLingerStatistics?) {
        guard let total else { return }
        let new = commitLingersSeen.withLock { seen -> CommitLingerStatistics in
            defer { seen = total }
            return total.since(seen)
        }
        for (end, count) in [("joined", new.joined), ("none-left", new.noneLeft), ("timed-out", new.timedOut)] {
            let counter = Counter(label: "gateway_store_commit_lingers_total", dimensions: [("end", end)], factory: factory)
            counter.increment(by: max(0, count))
        }
        FloatingPointCounter(label: "gateway_store_commit_linger_seconds_total", factory: factory)
            .increment(by: Double(max(0, Self.nanoseconds(new.waited))) / 1e9)
    }

    /// One webhook delivery attempt: `delivered`, `retry` or `dead`, and how long from the change's commit to the
    /// receiver's answer for a delivered one.
    package func recordDelivery(result: String, sinceChange: Duration?) {
        Counter(label: "gateway_webhook_deliveries_total", dimensions: [("result", result)], factory: factory)
            .increment()
        if let sinceChange {
            Timer(label: "gateway_webhook_delivery_delay_seconds", factory: factory)
                .recordNanoseconds(Self.nanoseconds(sinceChange))
        }
    }

    /// A webhook sender waited `pause` for a busy machine (``DeliveryPacing``).
    package func recordDeliveryPause(_ pause: Duration) {
        Counter(label: "gateway_webhook_paced_milliseconds_total", factory: factory)
            .increment(by: Int(max(1, Self.nanoseconds(pause) / 1_000_000)))
    }

    /// Gauges read at scrape time.
    package func observeLoad(running: Int, waiting: Int, spooled: Int?) {
        Gauge(label: "gateway_ingestions_running", factory: factory).record(running)
        Gauge(label: "gateway_ingestions_waiting", factory: factory).record(waiting)
        if let spooled { Gauge(label: "gateway_spooled_messages", factory: factory).record(spooled) }
    }

    /// The Prometheus text exposition.
    package func render() -> [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(16 * 1024)
        registry.emit(into: &buffer)
        return buffer
    }

    /// `markup.missing-property reservationFor.startDate` → `markup.missing-property`.
    static func stableCode(_ code: String) -> String {
        String(code.prefix { $0 != " " }.prefix(80))
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
