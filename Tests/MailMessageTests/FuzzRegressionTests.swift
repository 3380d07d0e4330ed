import Testing

@testable import MailMessage

/// Inputs that made the MIME reader or the address parser crash or take too long, found by
/// `make fuzz` (fuzz-mime, see Fuzz/README.md) or while reading the code it exercises, each kept with
/// the behaviour its fix gives. Time bounds are generous: debug builds on a busy machine; the
/// quadratic versions took minutes.
@Suite struct FuzzRegressionTests {
    private func seconds(_ work: () -> Void) -> Double {
        let start = ContinuousClock.now
        work()
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// `<@,<@,<@,…`: every comma inside an angle address that starts with a route looked ahead to the
    /// end of the field for the route's ':'.
    @Test func manyOpenRoutesTakeLinearTime() throws {
        let message = try RawMessage(
            bytes: utf8("From: a@example.com\r\nTo: " + String(repeating: "<@,", count: 200_000) + "\r\n\r\nbody\r\n"))
        var recipients: [MailAddress] = []
        let elapsed = seconds { recipients = message.recipients() }
        #expect(elapsed < 30)
        #expect(recipients.isEmpty)
    }

    /// An obsolete route (RFC 5322 §4.4) of 50,000 relays is still one address, read in linear time.
    @Test func longRouteIsOneAddress() {
        let route = (0..<50_000).map { "@relay\($0).example" }.joined(separator: ",")
        var list: [MailAddress] = []
        let elapsed = seconds { list = MailAddress.list(parsing: "Jane <\(route):jane@example.com>, b@example.org") }
        #expect(elapsed < 30)
        #expect(list.map(\.address) == ["jane@example.com", "b@example.org"])
        #expect(list.first?.displayName == "Jane")
    }
}
