/// What happened to one message a load client sent.
enum SubmissionOutcome: UInt8, Sendable {
    /// Acknowledged with its reservation admitted: HTTP 200 with verdict admitted, LMTP 250 "admitted".
    case admitted
    /// Acknowledged and kept for a decision later: HTTP 202, LMTP 250 "queued as spool #N".
    case queued
    /// Acknowledged, but no reservation admitted (HTTP 200 or LMTP 250 with another verdict).
    case rejected
    /// Refused because the queue was full (HTTP 429, LMTP 452): not acknowledged.
    case busy
    /// Any other answer (other 4xx and 5xx, LMTP 451 or 5yz): not acknowledged.
    case failed
    /// Sent, but the connection ended before the whole answer arrived (the server was killed).
    case inFlight

    /// Whether the server took responsibility for the message (the audit then expects it stored or spooled).
    var isAcknowledged: Bool { self == .admitted || self == .queued || self == .rejected }
}

/// What one client connection (or one client slot, over its reconnections) did.
struct ClientRecord: Sendable {
    struct Sent: Sendable {
        var index: Int
        var outcome: SubmissionOutcome
    }

    /// Every message taken from the corpus, with its outcome.
    var sent: [Sent] = []
    /// Latencies in nanoseconds of the acknowledged replies (for `/healthz`, of the 200s), from the first byte
    /// written to the last byte of the answer read.
    var latencies: [Int64] = []
    /// Replies to `/healthz` that were not 200.
    var healthFailures = 0
    /// The first few transport errors and unexpected answers (status and code only, never bodies).
    var problems: [String] = []
    /// Whether the corpus ran out for this client.
    var exhausted = false

    mutating func note(_ problem: String) {
        if problems.count < 5 { problems.append(problem) }
    }

    mutating func merge(_ other: ClientRecord) {
        sent += other.sent
        latencies += other.latencies
        healthFailures += other.healthFailures
        for problem in other.problems { note(problem) }
        exhausted = exhausted || other.exhausted
    }
}
