package import DNS
import Synchronization

/// A `TXTResolver` fake: a dictionary of names to records or errors, counting lookups.
///
/// Names are matched ignoring ASCII case and a trailing dot; an unknown name is `.nameNotFound`.
/// `hold()` makes lookups wait until `release()`, so tests can pile up concurrent lookups.
package final class InMemoryResolver: TXTResolver {
    private struct State {
        var answers: [String: Result<[TXTRecord], DNSError>] = [:]
        var lookups: [String: Int] = [:]
        var totalLookups = 0
        var held = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    package init(_ answers: [String: Result<[TXTRecord], DNSError>] = [:]) {
        state.withLock { state in
            for (name, answer) in answers { state.answers[Self.key(name)] = answer }
        }
    }

    /// Publishes `records` at `name`, replacing what was there.
    package func set(_ name: String, records: [TXTRecord]) {
        state.withLock { $0.answers[Self.key(name)] = .success(records) }
    }

    /// Publishes one TXT record holding `text` (split into 255-byte strings) with the given TTL.
    package func set(_ name: String, text: String, ttl: UInt32 = 300) {
        set(name, records: [TXTRecord(strings: Self.split(text), ttl: ttl)])
    }

    /// Makes lookups of `name` fail with `error`.
    package func set(_ name: String, error: DNSError) {
        state.withLock { $0.answers[Self.key(name)] = .failure(error) }
    }

    /// Makes lookups of `name` fail with an error of `code`.
    package func set(_ name: String, errorCode code: DNSError.Code) {
        set(name, error: DNSError(code: code, reason: "InMemoryResolver: \(code) configured for this name"))
    }

    package func remove(_ name: String) {
        state.withLock { $0.answers[Self.key(name)] = nil }
    }

    /// Lookups so far, of any name.
    package var lookupCount: Int { state.withLock { $0.totalLookups } }

    /// Lookups so far of `name`.
    package func lookupCount(for name: String) -> Int { state.withLock { $0.lookups[Self.key(name)] ?? 0 } }

    /// Lookups currently waiting for `release()`.
    package var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// From now on lookups wait until `release()`.
    package func hold() { state.withLock { $0.held = true } }

    /// Lets waiting and future lookups proceed.
    package func release() {
        let waiting = state.withLock { state in
            state.held = false
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    package func txtRecords(for name: String) async throws(DNSError) -> [TXTRecord] {
        let key = Self.key(name)
        let mustWait = state.withLock { state in
            state.totalLookups += 1
            state.lookups[key, default: 0] += 1
            return state.held
        }
        if mustWait {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state in
                    guard state.held else { return true }
                    state.waiting.append(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }
        let answer = state.withLock { $0.answers[key] }
        switch answer {
        case .success(let records)?:
            return records
        case .failure(let error)?:
            throw error
        case nil:
            throw DNSError(code: .nameNotFound, reason: "InMemoryResolver: no entry for \(key)")
        }
    }

    /// Splits text into the ≤ 255-byte character-strings a TXT record carries (RFC 1035 §3.3.14).
    package static func split(_ text: String) -> [[UInt8]] {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { return [[]] }
        return stride(from: 0, to: bytes.count, by: 255).map { Array(bytes[$0..<min($0 + 255, bytes.count)]) }
    }

    private static func key(_ name: String) -> String {
        var name = name.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        return name
    }
}
