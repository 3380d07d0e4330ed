import Crypto
internal import Foundation

/// `gateway store copy`: moves a whole store from one backend to another and proves it by counts and a content
/// digest read back from the target.
///
/// The digest is SHA-256 over every row of every table in key order, each row as canonical JSON (sorted keys, times
/// in milliseconds, bytes in base64): the same on every backend for the same content, so a round trip
/// SQLite → PostgreSQL → SQLite gives the same digest. Writers must be stopped meanwhile: rows written during a copy
/// may or may not be copied, and the verification then fails.
package enum StoreCopy {
    /// What a copy moved.
    package struct Report: Codable, Hashable, Sendable {
        /// Rows per table, as read back from the target.
        package var counts: [StoreTable: Int]
        /// The content digest of the source, equal to the target's.
        package var digest: String
    }

    /// Copies every row of `source` into `target`, which must be empty, then reads `target` back and compares.
    /// - Throws: ``StoreError`` `store.copy-target-not-empty`, `store.copy-mismatch`, or the backends' errors.
    package static func copy(from source: any StoreTransfer, to target: any StoreTransfer) async throws -> Report {
        guard try await target.isEmpty() else {
            throw StoreError(
                code: .copyTargetNotEmpty,
                reason: "the target store already holds data; copy into an empty database or file")
        }
        var written = Digest()
        for table in StoreTable.allCases {
            var cursor: TransferCursor? = nil
            while true {
                let page = try await source.exportRows(table, after: cursor, limit: table.pageSize)
                guard let last = page.last else { break }
                try await target.importRows(page)
                try written.add(page, of: table)
                cursor = last.cursor
            }
        }
        try await target.finishImport()
        let readBack = try await digest(of: target)
        guard readBack.counts == written.counts, readBack.value == written.value else {
            let differing = StoreTable.allCases.filter { readBack.counts[$0] != written.counts[$0] }.map(\.rawValue)
            throw StoreError(
                code: .copyMismatch,
                reason:
                    "the target does not read back as written (\(differing.isEmpty ? "same counts, different content" : "counts differ in " + differing.joined(separator: ", "))); "
                    + "stop every writer of the source and copy again into an empty target")
        }
        return Report(counts: readBack.counts, digest: readBack.value)
    }

    /// The counts and the content digest of `store`, read in pages.
    package static func digest(of store: any StoreTransfer) async throws -> (counts: [StoreTable: Int], value: String) {
        var digest = Digest()
        for table in StoreTable.allCases {
            var cursor: TransferCursor? = nil
            while true {
                let page = try await store.exportRows(table, after: cursor, limit: table.pageSize)
                guard let last = page.last else { break }
                try digest.add(page, of: table)
                cursor = last.cursor
            }
        }
        return (digest.counts, digest.value)
    }

    /// A running SHA-256 over canonical rows, and counts.
    struct Digest {
        private var hasher = SHA256()
        private(set) var counts: [StoreTable: Int] = Dictionary(uniqueKeysWithValues: StoreTable.allCases.map { ($0, 0) })
        private let encoder: JSONEncoder = {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            encoder.dateEncodingStrategy = .millisecondsSince1970
            encoder.dataEncodingStrategy = .base64
            return encoder
        }()

        mutating func add(_ records: [TransferRecord], of table: StoreTable) throws {
            for record in records {
                hasher.update(data: Data(table.rawValue.utf8))
                hasher.update(data: try encoder.encode(record))
                hasher.update(data: Data([0x0A]))
            }
            counts[table, default: 0] += records.count
        }

        var value: String {
            hasher.finalize().map { String(format: "%02x", $0) }.joined()
        }
    }
}
