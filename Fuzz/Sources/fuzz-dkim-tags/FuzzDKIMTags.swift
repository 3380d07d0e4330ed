import DKIM
import DNS
import Foundation
import FuzzSupport
import MailMessage

@main enum FuzzDKIMTagsMain {
    static func main() { exit(runLibFuzzer(fuzzDKIMTags)) }
}

/// libFuzzer entry point for DKIM's tag-list parser (RFC 6376 §3.2) and everything built on it:
/// key records (§3.6.1) and DKIM-Signature fields (§3.5), then the whole verification.
///
/// Input: a key record's text, a NUL byte, then a message (see `Fuzz/README.md`). Without a NUL the
/// whole input is the key record and also the value of a DKIM-Signature field on a small fixed
/// message. The key record is parsed on its own, then served for every name by an in-process
/// resolver to a `DKIMVerifier` at a fixed instant, so a fuzzed signature meets a fuzzed key.
/// A trap, a sanitizer report, a timeout or a broken invariant below is a bug in `DKIM`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDKIMTags(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = UnsafeBufferPointer(start: data, count: size)
    let keyText: [UInt8]
    let messageBytes: [UInt8]
    if let separator = input.firstIndex(of: 0) {
        keyText = Array(input[..<separator])
        messageBytes = Array(input[(separator + 1)...])
    } else {
        keyText = Array(input)
        messageBytes = Array("DKIM-Signature:".utf8) + keyText + Array(fixedMessage.utf8)
    }

    if let record = try? KeyRecord(parsing: keyText, name: "fuzz._domainkey.example.com") {
        precondition(record.isRevoked == record.publicKeyData.isEmpty, "revocation disagrees with the key data")
    }

    guard let message = try? RawMessage(bytes: messageBytes) else { return 0 }
    let signatureCount = message.fields(named: "dkim-signature").count
    let verification = runBlocking { await verifier(serving: keyText).verify(message) }
    precondition(verification.signatures.count == signatureCount, "one result per DKIM-Signature field")
    _ = AuthenticationResults.header(for: verification, authServID: "fuzz.example.org")
    return 0
}

/// Appended after a NUL-less input's `DKIM-Signature:` value: the fields a signature usually covers.
private let fixedMessage =
    "\r\nFrom: Booking <confirm@example.com>\r\nTo: guest@example.net\r\nSubject: Your reservation\r\n"
    + "Date: Tue, 4 Nov 2025 10:00:00 +0000\r\n\r\n<p>Reservation 12345</p>\r\n"

/// A verifier whose resolver answers every name with one TXT record holding `keyText`, split into
/// 255-byte strings as DNS carries it, with the clock fixed just after the fixtures were signed (November 2026).
private func verifier(serving keyText: [UInt8]) -> DKIMVerifier {
    var configuration = DKIMVerifier.Configuration()
    configuration.now = { Date(timeIntervalSince1970: 1_795_243_000) }
    return DKIMVerifier(resolver: FixedResolver(keyText: keyText), configuration: configuration)
}

private struct FixedResolver: TXTResolver {
    let record: TXTRecord

    init(keyText: [UInt8]) {
        let strings = stride(from: 0, to: max(keyText.count, 1), by: 255).map {
            Array(keyText[$0..<min($0 + 255, keyText.count)])
        }
        record = TXTRecord(strings: strings, ttl: 300)
    }

    func txtRecords(for name: String) async throws(DNSError) -> [TXTRecord] { [record] }
}
