import DNS
@testable import DKIM
import Foundation
import MailMessage

/// Fixture access for the DKIM tests: byte-exact messages, test-only keys and their zone files.
enum Fixtures {
    static let directory = Bundle.module.resourceURL!.appendingPathComponent("Fixtures")

    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
    }

    static func message(_ name: String) throws -> RawMessage {
        try RawMessage(bytes: bytes(name))
    }

    static func text(_ name: String) throws -> String {
        try String(decoding: bytes(name), as: UTF8.self)
    }

    static func key(_ name: String) throws -> PrivateKey {
        try PrivateKey(pem: text("keys/\(name).pem"))
    }

    /// The time dkimpy signed the fixtures, plus a minute.
    static let dkimpySigningTime = Date(timeIntervalSince1970: 1_795_242_349 + 60)
    static let rfc8463SigningTime = Date(timeIntervalSince1970: 1_528_637_909 + 60)
}

/// A fixture zone file (read by the real `ZoneFileResolver`) with per-test overrides on top.
/// A value type, so a test can copy it and change one answer.
struct StaticResolver: TXTResolver {
    var answers: [String: Result<[TXTRecord], DNSError>] = [:]
    private var zone: ZoneFileResolver?

    init(zoneFixture name: String) throws {
        zone = try ZoneFileResolver(contentsOfFile: Fixtures.directory.appendingPathComponent(name).path)
    }

    func txtRecords(for name: String) async throws(DNSError) -> [TXTRecord] {
        if let answer = answers[name.lowercased()] { return try answer.get() }
        guard let zone else { throw DNSError(code: .nameNotFound, reason: "no fixture zone") }
        return try await zone.txtRecords(for: name)
    }

    mutating func set(_ name: String, _ text: String) {
        answers[name] = .success([TXTRecord(strings: [Array(text.utf8)], ttl: 60)])
    }

    mutating func remove(_ name: String) {
        answers[name] = .failure(DNSError(code: .nameNotFound, reason: "removed by the test"))
    }
}

extension DKIMVerifier {
    static func fixture(_ resolver: any TXTResolver, at date: Date = Fixtures.dkimpySigningTime) -> DKIMVerifier {
        var configuration = Configuration()
        configuration.now = { date }
        return DKIMVerifier(resolver: resolver, configuration: configuration)
    }
}

extension DKIMSigner {
    static func fixture(_ key: PrivateKey, selector: String, at date: Date = Fixtures.dkimpySigningTime,
                        configure: (inout Configuration) -> Void = { _ in }) -> DKIMSigner {
        var configuration = Configuration(signingDomain: "example.com", selector: selector)
        configuration.now = { date }
        configure(&configuration)
        return DKIMSigner(key: key, configuration: configuration)
    }
}

extension RawMessage {
    /// The message with `transform` applied to its bytes (for tampering).
    func altered(_ transform: (String) -> String) throws -> RawMessage {
        try RawMessage(transform(String(decoding: bytes, as: UTF8.self)))
    }
}
