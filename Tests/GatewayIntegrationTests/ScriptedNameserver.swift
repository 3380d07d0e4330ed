import DNS
import Foundation
import Synchronization
import TestSupport

/// A nameserver on 127.0.0.1 whose behaviour a test switches while the gateway runs: answering the DKIM key
/// records it holds, failing every query with SERVFAIL (a DKIM temperror, RFC 6376 §6.1.2), or holding every
/// query unanswered until the test releases it (a slow DNS server, to keep a delivery in flight).
///
/// Built on TestSupport's `FakeDNSResponder` (its `.custom` behaviour runs on the responder's own threads, so a
/// held query blocks only the responder, never the test's tasks).
final class ScriptedNameserver: Sendable {
    enum Mode: Sendable, Equatable {
        /// The records held for the name; NXDOMAIN for any other.
        case answer
        /// RCODE 2 to every query.
        case serverFailure
        /// No answer until the mode changes (at most `maximumHold`), then the new mode's answer.
        case hold
    }

    /// A held query is answered after this long whatever the mode, so a forgotten release cannot hang a test.
    static let maximumHold = Duration.seconds(10)

    private struct State {
        var mode: Mode
        var records: [String: String] = [:]
        var queries = 0
    }

    /// The state the responder's threads and the test share.
    private final class Script: Sendable {
        let state: Mutex<State>

        init(_ state: State) { self.state = Mutex(state) }
    }

    private let script: Script
    private let responder: Mutex<FakeDNSResponder?>
    let nameserver: NameserverAddress

    /// Starts answering at once, in `mode`, with `records` (owner name → TXT value).
    init(records: [String: String], mode: Mode = .answer) throws {
        let script = Script(State(mode: mode, records: Dictionary(uniqueKeysWithValues: records.map { ($0.key.lowercased(), $0.value) })))
        self.script = script
        let responder = try FakeDNSResponder(.custom { query, _ in Self.reply(to: query, script: script) })
        nameserver = responder.nameserver
        self.responder = Mutex(responder)
    }

    deinit { stop() }

    /// `--nameserver` for the gateway.
    var address: String { nameserver.description }

    var mode: Mode {
        get { script.state.withLock { $0.mode } }
        set { script.state.withLock { $0.mode = newValue } }
    }

    /// Queries received so far (each attempt counts).
    var queries: Int { script.state.withLock { $0.queries } }

    func stop() {
        let running = responder.withLock { responder in
            defer { responder = nil }
            return responder
        }
        running?.stop()
    }

    /// Waits until at least `count` queries arrived. - Returns: false after `timeout`.
    func waitForQueries(_ count: Int, timeout: Duration = .seconds(20)) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if queries >= count { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return queries >= count
    }

    private static func reply(to query: [UInt8], script: Script) -> [[UInt8]] {
        var mode = script.state.withLock { state in
            state.queries += 1
            return state.mode
        }
        let deadline = ContinuousClock.now + maximumHold
        while mode == .hold && ContinuousClock.now < deadline {
            usleep(5_000)
            mode = script.state.withLock { $0.mode }
        }
        switch mode {
        case .serverFailure:
            return [TestDNSMessage.response(to: query, rcode: 2)].compactMap { $0 }
        case .answer, .hold:
            guard let name = questionName(query), let value = script.state.withLock({ $0.records[name] }) else {
                return [TestDNSMessage.response(to: query, rcode: 3)].compactMap { $0 }
            }
            let record = TXTRecord(strings: [Array(value.utf8)], ttl: 0)
            return [TestDNSMessage.response(to: query, answers: [record])].compactMap { $0 }
        }
    }

    /// The question's name, lower-cased and dotted (RFC 1035 §4.1.2; queries carry no compression).
    static func questionName(_ query: [UInt8]) -> String? {
        guard let question = TestDNSMessage.question(of: query) else { return nil }
        var labels: [String] = []
        var position = question.startIndex
        while position < question.endIndex {
            let length = Int(question[position])
            if length == 0 { break }
            let end = position + 1 + length
            guard end <= question.endIndex else { return nil }
            labels.append(String(decoding: question[(position + 1)..<end], as: UTF8.self).lowercased())
            position = end
        }
        return labels.joined(separator: ".")
    }
}
