import Foundation
import FuzzSupport
import Markup
import Reservations

@main enum FuzzResolveMain {
    static func main() { exit(runLibFuzzer(fuzzResolve)) }
}

/// libFuzzer entry point for resolution: the input is a JSON-LD document, as a sender writes it.
///
/// Resolution runs in the gateway's own process, not in the sandbox, on graphs any sender can write, so a trap
/// here would stop the gateway. The document is extracted as an `application/ld+json` part, resolved with the
/// default limits and with tight ones, and what the store keeps of each result must survive its round trip: the
/// reservation written by `CanonicalJSONEncoder` and read back by `JSONDecoder` (as `StoredPayload` reads it), the
/// normalized markup read back by `JSONValue(parsing:)`. The booking listings and summaries are made too. A trap, a
/// sanitizer report, a timeout or a broken invariant below is a bug in `Reservations` (or in `Markup`).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzResolve(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let graph = MarkupExtractor().extract(jsonLD: text, path: "mime[1]")
    check(ReservationResolver().resolveDocument(graph), ReservationResolver.Configuration())

    var tight = ReservationResolver.Configuration()
    tight.maxDepth = 3
    tight.maxItemsWalked = 16
    tight.maxReservations = 2
    tight.maxItemsPerReservation = 4
    check(ReservationResolver(configuration: tight).resolveDocument(graph), tight)
    return 0
}

private func check(_ document: ResolvedDocument, _ configuration: ReservationResolver.Configuration) {
    let resolutions = document.resolutions
    precondition(resolutions.count <= configuration.maxReservations, "more resolutions than maxReservations")
    for resolution in resolutions {
        _ = resolution.summary
        guard let encodedMarkup = try? CanonicalJSONEncoder().encode(resolution.normalized) else {
            preconditionFailure("a normalized item could not be encoded")
        }
        guard let markup = try? JSONValue(parsing: encodedMarkup) else {
            preconditionFailure("a normalized item did not parse from its own JSON")
        }
        precondition(markup == resolution.normalized, "a normalized item changed in its JSON round trip")
        guard let reservation = resolution.reservation else { continue }
        guard let encoded = try? CanonicalJSONEncoder().encodeData(reservation) else {
            preconditionFailure("a reservation could not be encoded")
        }
        guard let decoded = try? JSONDecoder().decode(Reservation.self, from: encoded) else {
            preconditionFailure("a reservation did not decode from its own JSON")
        }
        precondition(decoded == reservation, "a reservation changed in its JSON round trip")
    }
    _ = BookingListing.listings(of: resolutions)
}
