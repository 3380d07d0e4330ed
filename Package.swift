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
        .executable(name: "gateway", targets: ["gateway"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    ],
    targets: [
        // System libraries: a module map and a shim header each, nothing else.
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CLibXML2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev"])]),

        .target(name: "MailMessage", swiftSettings: strictSettings),
        .target(name: "DNS", swiftSettings: strictSettings),
        .target(name: "DKIM", dependencies: ["MailMessage", "DNS", "COpenSSL"], swiftSettings: strictSettings),
        .target(name: "Markup", dependencies: ["MailMessage", "CLibXML2"], swiftSettings: strictSettings),
        .target(
            name: "Reservations",
            dependencies: ["Markup"],
            resources: [.copy("Resources/airports.tsv")],
            swiftSettings: strictSettings
        ),
        .target(
            name: "Store",
            dependencies: ["Reservations", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: strictSettings
        ),
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
        .executableTarget(
            name: "gateway",
            dependencies: [
                "MailMessage", "DNS", "DKIM", "Markup", "Reservations", "Store",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings
        ),

        // Shared fakes and real-server fixtures (dnsmasq, a SERVFAIL responder) for the test targets.
        .target(name: "TestSupport", dependencies: ["DNS"], path: "Tests/TestSupport", swiftSettings: strictSettings),
        .testTarget(name: "MailMessageTests", dependencies: ["MailMessage"], swiftSettings: strictSettings),
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
            name: "WebFetchTests",
            dependencies: [
                "WebFetch",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(name: "StoreTests", dependencies: ["Store", "TestSupport"], swiftSettings: strictSettings),
        .testTarget(
            name: "GatewayIntegrationTests",
            dependencies: ["DKIM", "DNS", "MailMessage", "Markup", "Reservations", "TestSupport"],
            swiftSettings: strictSettings
        ),
    ]
)
