import Glibc
import Synchronization

/// The crash phase's kill switch: counts the deliveries the server acknowledges in the phase and, on the
/// `threshold`th, sends SIGKILL to the server at once, from the event loop thread that read that answer, so the kill
/// lands while other deliveries are still in flight. It records what it saw at that instant, for the bench to check
/// that the kill came in time (before the corpus ran out, with deliveries in flight).
final class CrashTrigger: Sendable {
    /// What was true at the kill.
    struct Snapshot: Sendable {
        /// Deliveries acknowledged in this phase.
        var acknowledged: Int
        /// Deliveries sent and not yet answered.
        var inFlight: Int
        /// Messages taken from the corpus so far, and how many it has.
        var taken: Int
        var available: Int
    }

    let threshold: Int
    private let pid: pid_t
    private let corpus: LoadCorpus
    private let acknowledged = Atomic<Int>(0)
    private let inFlight = Atomic<Int>(0)
    private let fired = Atomic<Bool>(false)
    private let shot = Mutex<Snapshot?>(nil)

    init(threshold: Int, pid: pid_t, corpus: LoadCorpus) {
        self.threshold = threshold
        self.pid = pid
        self.corpus = corpus
    }

    /// A delivery's message was sent (the LMTP data, the HTTP request).
    func sent() {
        inFlight.add(1, ordering: .relaxed)
    }

    /// A delivery was answered; fires on the `threshold`th acknowledgement.
    func answered(acknowledged isAcknowledged: Bool) {
        let stillInFlight = inFlight.subtract(1, ordering: .relaxed).newValue
        guard isAcknowledged else { return }
        let count = acknowledged.add(1, ordering: .relaxed).newValue
        guard count >= threshold, fired.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged
        else { return }
        kill(pid, SIGKILL)
        let snapshot = Snapshot(
            acknowledged: count, inFlight: stillInFlight, taken: corpus.taken, available: corpus.available)
        shot.withLock { $0 = snapshot }
    }

    /// What was true at the kill, nil when it never fired.
    var snapshot: Snapshot? { shot.withLock { $0 } }
}
