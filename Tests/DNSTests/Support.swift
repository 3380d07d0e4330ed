import DNS

/// The `DNSError` a lookup throws, or nil if it succeeds (or throws something else).
func lookupError(_ body: () async throws -> [TXTRecord]) async -> DNSError? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error as? DNSError
    }
}

/// The `DNSError` a synchronous call throws, or nil if it succeeds (or throws something else).
func thrownError<T>(_ body: () throws -> T) -> DNSError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error as? DNSError
    }
}

/// Bytes of a string, for comparing TXT strings.
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
