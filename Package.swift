// swift-tools-version: 6.1
import PackageDescription

/// Every target gets the same settings (STYLE.md): Swift 6 mode plus these upcoming features.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "gateway",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "gateway", targets: ["gateway"]),
        .executable(name: "gateway-worker", targets: ["gateway-worker"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        // No default traits: the gateway reads its own configuration file (swift-configuration is not needed).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // SHA-256 for the store's content digest (`gateway store copy`); postgres-nio brings it already.
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        // The console's server-rendered pages (templates as resources).
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
    ],
    targets: [
        // System libraries: a module map and a shim header each, nothing else.
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CLibXML2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev"])]),
        .systemLibrary(name: "CLibIDN2", pkgConfig: "libidn2", providers: [.apt(["libidn2-dev"])]),
        .systemLibrary(name: "CSeccomp", pkgConfig: "libseccomp", providers: [.apt(["libseccomp-dev"])]),

        .target(name: "MailMessage", swiftSettings: strictSettings),
        .target(name: "DNS", swiftSettings: strictSettings),
        .target(name: "DKIM", dependencies: ["MailMessage", "DNS", "COpenSSL"], swiftSettings: strictSettings),
        .target(name: "Markup", dependencies: ["MailMessage", "CLibXML2"], swiftSettings: strictSettings),
        .target(
            name: "Reservations",
            dependencies: ["Markup", "MailMessage"],
            resources: [
                .copy("Resources/airports.tsv"), .copy("Resources/country-zones.tsv"),
                .copy("Resources/country-names.tsv"),
            ],
            swiftSettings: strictSettings
        ),
        // The store's protocols, records, lifecycle rules, limits and location: no database library.
        .target(
            name: "Store",
            dependencies: ["Reservations", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strictSettings
        ),
        // The backends, each its own target: they execute the lifecycle's plans.
        .target(
            name: "SQLiteStore",
            dependencies: ["Store", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: strictSettings
        ),
        // Event loops as task executors, and loops at a lower CPU priority for background work.
        .target(
            name: "EventLoopSupport",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "PostgresStore",
            dependencies: [
                "Store", "EventLoopSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        // A store in memory, executing the same plans, for unit tests of the other targets.
        .target(name: "InMemoryStore", dependencies: ["Store"], swiftSettings: strictSettings),
        // Opens the backend a store location names (`--store`, `store:`, GATEWAY_STORE).
        .target(
            name: "StoreBackends",
            dependencies: ["Store", "SQLiteStore", "PostgresStore", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSettings
        ),
        .target(
            name: "Admission",
            dependencies: [
                "DKIM", "DNS", "MailMessage", "Markup", "Reservations", "Store", "CLibIDN2",
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: strictSettings
        ),
        // The publish stage, what leaves the store: the reservation view, iCalendar feeds (RFC 5545, RFC 7986), change
        // events (CloudEvents 1.0) and webhook signatures (Standard Webhooks).
        .target(
            name: "Publishing",
            dependencies: ["Markup", "Reservations", "Store", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strictSettings
        ),
        // The pipeline the command line and the server share: authenticate, extract, resolve, admit, store.
        .target(
            name: "Ingestion",
            dependencies: [
                "Admission", "DKIM", "DNS", "MailMessage", "Markup", "Publishing", "Reservations", "Sandbox", "Store",
                "WebFetch",
            ],
            swiftSettings: strictSettings
        ),
        // Extraction in confined worker processes, and the worker executable (no NIO, no server).
        .target(name: "Sandbox", dependencies: ["CSeccomp", "Markup", "MailMessage"], swiftSettings: strictSettings),
        .executableTarget(
            name: "gateway-worker", dependencies: ["Sandbox", "Markup", "MailMessage"], swiftSettings: strictSettings),
        .target(
            name: "WebFetch",
            dependencies: [
                "COpenSSL",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strictSettings
        ),
        // LMTP (RFC 2033) on SwiftNIO: the protocol engine; what a delivery means is the server's.
        .target(
            name: "LMTP",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        // `gateway serve`: the HTTP API (Hummingbird), the LMTP listener, tokens, feeds and metrics.
        .target(
            name: "GatewayServer",
            dependencies: [
                "Admission", "DKIM", "DNS", "Publishing", "Ingestion", "LMTP", "MailMessage", "Reservations", "Sandbox", "Store",
                "WebFetch", "COpenSSL", "EventLoopSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Mustache", package: "swift-mustache"),
            ],
            resources: [.copy("Resources/openapi.yaml"), .copy("Resources/Console")],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "gateway",
            dependencies: [
                "MailMessage", "DNS", "DKIM", "Markup", "Reservations", "Store", "StoreBackends", "Admission", "Ingestion", "Sandbox",
                "Publishing", "WebFetch", "GatewayServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),

        // `make bench`: throughput on generated corpora, beside the same run's baselines.
        .executableTarget(
            name: "gateway-bench",
            dependencies: [
                "DKIM", "DNS", "MailMessage", "Markup", "Reservations", "Admission", "Ingestion", "Sandbox", "Store",
                "SQLiteStore", "PostgresStore", "GatewayServer", "EventLoopSupport",
                // A durable PostgreSQL for the ingest suite (the tests' PostgresServer, with fsync on).
                "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                // The serve suite's load clients (HTTP/1.1 and LMTP on SwiftNIO); the publish suite's HTTPS receiver.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Benchmarks/gateway-bench",
            swiftSettings: strictSettings
        ),

        // Shared fakes and real-server fixtures (dnsmasq, a SERVFAIL responder, the nginx HTTPS test site).
        .target(name: "TestSupport", dependencies: ["DNS"], path: "Tests/TestSupport", swiftSettings: strictSettings),
        // Test-only worker that misbehaves on command (opens files, forks, loops), for SandboxTests.
        .executableTarget(
            name: "gateway-worker-probe",
            dependencies: ["Sandbox", "Markup", "CSeccomp"],
            path: "Tests/gateway-worker-probe",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SandboxTests", dependencies: ["Sandbox", "Markup", "MailMessage"], swiftSettings: strictSettings),
        .testTarget(name: "MailMessageTests", dependencies: ["MailMessage", "TestSupport"], swiftSettings: strictSettings),
        .testTarget(name: "DNSTests", dependencies: ["DNS", "TestSupport"], swiftSettings: strictSettings),
        .testTarget(
            name: "DKIMTests",
            dependencies: ["DKIM", "DNS", "MailMessage", "TestSupport"],
            resources: [.copy("Fixtures")],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "MarkupTests",
            dependencies: ["Markup", "MailMessage", "TestSupport"],
            resources: [.copy("Fixtures")],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ReservationsTests",
            dependencies: ["Reservations", "Markup", "MailMessage", "TestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "PublishingTests", dependencies: ["Publishing", "Reservations", "Store", "TestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "AdmissionTests",
            dependencies: ["Admission", "DNS", "Markup", "Reservations", "Store", "InMemoryStore", "TestSupport"],
            swiftSettings: strictSettings),
        // One conformance suite over every backend (SQLite, a real PostgreSQL, in memory), plus what is only one
        // backend's (GRDB directly, to craft foreign and older SQLite databases).
        .testTarget(
            name: "StoreTests",
            dependencies: [
                "Store", "SQLiteStore", "PostgresStore", "InMemoryStore", "Reservations", "TestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "WebFetchTests",
            dependencies: [
                "WebFetch", "TestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "LMTPTests",
            dependencies: [
                "LMTP", "TestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "GatewayServerTests",
            dependencies: [
                "GatewayServer", "EventLoopSupport", "Admission", "DKIM", "DNS", "Ingestion", "MailMessage", "Sandbox", "Store", "SQLiteStore", "InMemoryStore",
                "Publishing", "WebFetch", "TestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "GatewayIntegrationTests",
            dependencies: ["DKIM", "DNS", "MailMessage", "Markup", "Reservations", "Sandbox", "TestSupport"],
            exclude: ["Scripts"],
            resources: [.copy("Fixtures")],
            swiftSettings: strictSettings
        ),
    ]
)

// `make fuzz` (Scripts/fuzz.sh, Fuzz/README.md): libFuzzer targets, declared only when GATEWAY_FUZZ=1
// so that the normal build never compiles them. The script builds them into .build-fuzz with
// `-sanitize=fuzzer,address -parse-as-library`.
if Context.environment["GATEWAY_FUZZ"] == "1" {
    func fuzzTarget(_ name: String, _ dependencies: [Target.Dependency]) -> Target {
        .executableTarget(
            name: name, dependencies: ["FuzzSupport"] + dependencies, path: "Fuzz/Sources/\(name)",
            swiftSettings: strictSettings)
    }
    package.targets += [
        .systemLibrary(name: "CLibFuzzer", path: "Fuzz/Sources/CLibFuzzer"),
        .target(name: "FuzzSupport", dependencies: ["CLibFuzzer"], path: "Fuzz/Sources/FuzzSupport", swiftSettings: strictSettings),
        fuzzTarget("fuzz-mime", ["MailMessage"]),
        fuzzTarget("fuzz-dkim-tags", ["DKIM", "DNS", "MailMessage"]),
        fuzzTarget("fuzz-markup", ["Markup"]),
        fuzzTarget("fuzz-resolve", ["Markup", "Reservations"]),
    ]
}
