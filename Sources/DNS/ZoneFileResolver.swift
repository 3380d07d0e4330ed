internal import Foundation

/// TXT records from a static zone file, for running without DNS (offline verification, tests, demos).
///
/// Reads the master-file format of RFC 1035 §5.1 as far as key records need: owner, optional TTL and
/// class in either order, type and RDATA; quoted strings with `\"` and `\DDD` escapes; records in
/// parentheses over several lines; `;` comments; `$ORIGIN`, `$TTL` (RFC 2308 §4), `@` and relative
/// names. Only TXT records are kept; records of other types mark their name as existing, so a TXT
/// lookup there is `.noData` while an unknown name is `.nameNotFound`. No CNAMEs are followed.
///
/// ```
/// $ORIGIN example.com.
/// $TTL 3600
/// sel._domainkey  IN TXT ( "v=DKIM1; k=rsa; "
///                          "p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQ..." )
/// ```
package struct ZoneFileResolver: TXTResolver {
    /// Lower-cased absolute names without the final dot → their TXT records (empty: exists without TXT).
    private let records: [String: [TXTRecord]]
    /// Where the records came from, for ``freshTXTAnswer(for:)``: `zone file PATH`, or `zone text`.
    package let source: String

    /// Parses zone-file text.
    ///
    /// - Parameters:
    ///   - origin: the origin before any `$ORIGIN` line, for relative names; nil means relative names
    ///     need a `$ORIGIN` first.
    ///   - defaultTTL: the TTL of records before any `$TTL` or explicit TTL. Default 3600.
    /// - Throws: `ZoneFileError` with the line of the first problem.
    package init(zoneText: String, origin: String? = nil, defaultTTL: UInt32 = 3600) throws(ZoneFileError) {
        var parser = ZoneFileParser(defaultTTL: defaultTTL)
        if let origin { try parser.setInitialOrigin(origin) }
        records = try parser.parse(Array(zoneText.utf8))
        source = "zone text"
    }

    /// Reads and parses the zone file at `path`.
    /// - Throws: `ZoneFileError` (`.unreadableFile` with line 0 if it cannot be read).
    package init(contentsOfFile path: String, origin: String? = nil, defaultTTL: UInt32 = 3600) throws(ZoneFileError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ZoneFileError(
                code: .unreadableFile, line: 0,
                reason: "cannot read the zone file \(path); check that it exists and is readable")
        }
        var parser = ZoneFileParser(defaultTTL: defaultTTL)
        if let origin { try parser.setInitialOrigin(origin) }
        records = try parser.parse([UInt8](data))
        source = "zone file \(path)"
    }

    /// Names with at least one record of any type, lower-cased, without the final dot.
    package var names: [String] { records.keys.sorted() }

    package func txtRecords(for name: String) async throws(DNSError) -> [TXTRecord] {
        let domainName = try DomainName(validating: name)
        let key = domainName.description
        guard let found = records[key] else {
            throw DNSError(code: .nameNotFound, reason: "\(key) is not in the zone file")
        }
        guard !found.isEmpty else {
            throw DNSError(code: .noData, reason: "\(key) is in the zone file but has no TXT record")
        }
        return found
    }

    package func freshTXTAnswer(for name: String) async -> TXTAnswer {
        do {
            return TXTAnswer(result: .success(try await txtRecords(for: name)), answeredBy: source)
        } catch {
            return TXTAnswer(result: .failure(error), answeredBy: error.code == .invalidName ? nil : source)
        }
    }
}
