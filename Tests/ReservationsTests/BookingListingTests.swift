import Foundation
import Markup
import Reservations
import Testing

/// Whether a document evidently lists the whole booking (MARKUP.md, Re-bookings): the value the store
/// acts on to supersede parts a new confirmation no longer lists.
@Suite("Re-bookings: does the message list the whole booking?")
struct BookingListingTests {

    static let out = ("110", "SFO", "EWR", "2027-03-04T20:15:00-08:00", "2027-03-05T04:30:00-05:00")
    static let back = ("111", "EWR", "SFO", "2027-03-10T08:00:00-05:00", "2027-03-10T11:30:00-08:00")
    /// A connection on the outbound day: Newark on to Boston the next morning.
    static let connection = ("2201", "EWR", "BOS", "2027-03-05T07:00:00-05:00", "2027-03-05T08:20:00-05:00")

    static func listing(_ legs: [String]) throws -> BookingListing {
        let document = ReservationResolver().resolveDocument(try GraphBuilder.graph("[" + legs.joined(separator: ",") + "]"))
        try #require(document.bookings.count == 1)
        return document.bookings[0]
    }

    /// A leg of booking RXJ34P for `passenger`, with `extra` members added to the reservation.
    static func part(_ leg: (String, String, String, String, String), for passenger: String = "Eva Green", extra: String = "")
        -> String
    {
        IdentityTests.leg(passenger, leg.0, leg.1, leg.2, leg.3, leg.4).dropLast(1) + extra + "}"
    }

    @Test func aConfirmationOfTheTripListsTheWholeBooking() throws {
        let listing = try Self.listing([
            Self.part(Self.out, for: "Eva Green"), Self.part(Self.back, for: "Eva Green"),
            Self.part(Self.out, for: "John Green"), Self.part(Self.back, for: "John Green"),
        ])
        #expect(listing.containerReference == "RXJ34P")
        #expect(listing.verdict == .wholeBooking)
        #expect(listing.listsWholeBooking)
        #expect(listing.parts.map(\.itemReference) == [
            "RXJ34P-UA110-2027-03-04-EVA GREEN", "RXJ34P-UA111-2027-03-10-EVA GREEN",
            "RXJ34P-UA110-2027-03-04-JOHN GREEN", "RXJ34P-UA111-2027-03-10-JOHN GREEN",
        ])
        #expect(listing.parts.map(\.partKey) == ["UA110-2027-03-04", "UA111-2027-03-10", "UA110-2027-03-04", "UA111-2027-03-10"])
    }

    @Test func aOnePartConfirmationListsTheWholeBooking() throws {
        let listing = try Self.listing([Self.part(Self.out)])
        #expect(listing.verdict == .wholeBooking)
        #expect(listing.parts == [BookingListing.Part(itemReference: "RXJ34P", partKey: "UA110-2027-03-04")])
    }

    static let checkIn = #", "checkinUrl": "https://united.example/checkin""#
    static let checkInAction = #", "potentialAction": {"@type": "CheckInAction", "target": "https://united.example/checkin"}"#

    @Test(arguments: [checkIn, checkInAction])
    func aCheckInReminderForTheComingJourneyIsAboutPartsOnly(prompt: String) throws {
        #expect(try Self.listing([Self.part(Self.back, extra: prompt)]).verdict == .checkInReminder)
        // A connection: two legs within a day, both to check in for.
        let journey = try Self.listing([Self.part(Self.out, extra: prompt), Self.part(Self.connection, extra: prompt)])
        #expect(journey.verdict == .checkInReminder)
        #expect(!journey.listsWholeBooking)
    }

    @Test func aConfirmationOfferingCheckInForTheWholeTripIsWhole() throws {
        let listing = try Self.listing([Self.part(Self.out, extra: Self.checkIn), Self.part(Self.back, extra: Self.checkIn)])
        #expect(listing.verdict == .wholeBooking)
    }

    @Test(arguments: [
        #", "boardingGroup": "B""#, #", "passengerSequenceNumber": "042""#, #", "securityScreening": "TSA PreCheck""#,
        #", "ticketToken": "aztecCode:M1GREEN/EVA""#,
    ])
    func aBoardingPassIsAboutOnePart(property: String) throws {
        let listing = try Self.listing([Self.part(Self.out, extra: property), Self.part(Self.back)])
        #expect(listing.verdict == .boardingPass)
    }

    @Test func aPartThatCannotBeReadLeavesTheListingOpen() throws {
        let broken = Self.part(Self.back).replacingOccurrences(of: #""iataCode": "EWR""#, with: #""iataCode": "E1""#)
        let listing = try Self.listing([Self.part(Self.out), broken])
        #expect(listing.verdict == .partNotAdmissible)
        #expect(listing.parts.count == 2, "every part is listed all the same")
    }

    @Test func aCancellationOfTheWholeBookingIsNotAListing() throws {
        let listing = try Self.listing([
            #"{"@type": "FlightReservation", "reservationNumber": "RXJ34P", "reservationStatus": "http://schema.org/Cancelled"}"#
        ])
        #expect(listing.verdict == .cancellation)
    }

    @Test func aPassengerMissingFromALegIsNotTheWholeBooking() throws {
        let listing = try Self.listing([
            Self.part(Self.out, for: "Eva Green"), Self.part(Self.back, for: "Eva Green"), Self.part(Self.out, for: "John Green"),
        ])
        #expect(listing.verdict == .passengerMissingFromLeg)
    }

    @Test func eachBookingOfADocumentIsListedOnItsOwn() throws {
        let hotel = Samples.appleLodging.replacingOccurrences(of: #""abc456""#, with: #""HC-1""#)
        let secondRoom = hotel.replacingOccurrences(of: "John Smith", with: "Jane Smith")
        let document = ReservationResolver().resolveDocument(
            try GraphBuilder.graph("[\(Self.part(Self.out)), \(hotel), \(secondRoom)]"))
        #expect(document.bookings.map(\.containerReference) == ["RXJ34P", "HC-1"])
        #expect(document.bookings.map(\.verdict) == [.wholeBooking, .wholeBooking], "rooms under different names are parts")
        #expect(document.booking("HC-1")?.parts.count == 2)
        #expect(document.booking("NONE") == nil)
    }
}
