import Foundation
import Hummingbird
import Ingestion
import Store
import NIOCore

extension GatewayApplication {
    /// `/healthz` (the process answers), `/readyz` (it can take work), `/metrics`, `/openapi.yaml`.
    static func addOperationalRoutes(to router: Router<GatewayRequestContext>, _ services: GatewayServices) {
        router.get("/healthz") { _, _ in
            // The process answers (200) whatever the store does; the body says whether the store answers too.
            struct Health: Encodable {
                var status = "ok"
                var store: String
                var storeProblem: String?
                var storeUnavailableSince: Date?
            }
            let health = services.storeHealth.snapshot
            return try json(
                Health(
                    store: health.isAvailable ? "available" : "unavailable", storeProblem: health.problem,
                    storeUnavailableSince: health.since))
        }

        router.get("/readyz") { _, _ in
            var problems: [String] = []
            if services.lifecycle.isDraining { problems.append("shutting down") }
            if !services.sandboxReady() { problems.append("no extraction worker is running") }
            if let problem = services.storeHealth.snapshot.problem {
                problems.append("the store does not answer: \(problem)")
            } else {
                do {
                    // A quick look, so that readiness does not wait for the watcher's next probe.
                    _ = try await StoreWatcher.within(.seconds(2)) {
                        try await services.ingestor.environment.store.changeGenerations()
                    }
                } catch {
                    services.storeHealth.record(error)
                    problems.append("the store does not answer: \(error)")
                }
            }
            if services.gate.isFull { problems.append("the ingestion queue is full") }
            struct Readiness: Encodable {
                var status: String
                var problems: [String]
                var running: Int
                var waiting: Int
            }
            let load = services.gate.load
            return try json(
                Readiness(
                    status: problems.isEmpty ? "ready" : "not-ready", problems: problems, running: load.running,
                    waiting: load.waiting),
                status: problems.isEmpty ? .ok : .serviceUnavailable)
        }

        router.get("/metrics") { _, _ in
            services.metrics.observeSandboxRestarts(total: services.sandboxRestarts())
            let load = services.gate.load
            let store = services.ingestor.environment.store
            var spooled: Int?
            if services.storeHealth.isAvailable {
                spooled = try? await StoreWatcher.within(.seconds(2)) { try await store.spooledMessageCount() }
            }
            services.metrics.observeLoad(running: load.running, waiting: load.waiting, spooled: spooled)
            services.metrics.observeCommitLingers(total: store.commitLingers)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: services.metrics.render())))
        }

        router.get("/openapi.yaml") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/yaml"],
                body: .init(byteBuffer: ByteBuffer(bytes: OpenAPIDocument.bytes)))
        }
    }
}

/// The API's description (Resources/openapi.yaml), served as is.
package enum OpenAPIDocument {
    package static let bytes: [UInt8] = {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml"),
            let data = try? Data(contentsOf: url)
        else { return Array("openapi: 3.1.0\ninfo: {title: gateway, version: unknown}\npaths: {}\n".utf8) }
        return [UInt8](data)
    }()
}
