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

/// A resolver answering from a fixed table; records may be split into strings.
struct StaticResolver: TXTResolver {
    var answers: [String: Result<[TXTRecord], DNSError>]

    init(_ answers: [String: Result<[TXTRecord], DNSError>] = [:]) {
        self.answers = answers
    }

    /// Reads a fixture zone file: `name [ttl] IN TXT "a" "b"`, with `( )` continuation lines.
    init(zoneFixture name: String) throws {
        var answers: [String: Result<[TXTRecord], DNSError>] = [:]
        var pending = ""
        for line in try Fixtures.text(name).split(separator: "\n", omittingEmptySubsequences: false) {
            let content = line.hasPrefix(";") || line.hasPrefix("$") ? "" : String(line)
            pending += " " + content
            if pending.filter({ $0 == "(" }).count > pending.filter({ $0 == ")" }).count { continue }
            let fields = pending.split(separator: " ", maxSplits: 1)
            if let owner = fields.first, pending.contains("TXT") {
                let strings = pending.split(separator: "\"").enumerated().filter { $0.offset % 2 == 1 }.map { Array($0.element.utf8) }
                answers[String(owner).lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "."))] =
                    .success([TXTRecord(strings: strings, ttl: 3600)])
            }
            pending = ""
        }
        self.answers = answers
    }

    func txtRecords(for name: String) async throws(DNSError) -> [TXTRecord] {
        let key = name.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "."))
        guard let answer = answers[key] else {
            throw DNSError(code: .nameNotFound, reason: "\(name) is not in the fixture zone")
        }
        return try answer.get()
    }

    mutating func set(_ name: String, _ text: String) {
        answers[name] = .success([TXTRecord(strings: [Array(text.utf8)], ttl: 60)])
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
