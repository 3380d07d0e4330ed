import Foundation
import Markup
import Reservations
import Testing

@Suite("Each kind, in both dialects and both syntaxes")
struct KindResolutionTests {
    @Test(arguments: SampleCase.all)
    func completeSampleIsAdmissible(sample: SampleCase) throws {
        let resolution = try resolveOne(sample.json, syntax: sample.syntax)
        let reservation = try #require(resolution.reservation)
        #expect(resolution.errors.isEmpty)
        #expect(resolution.admissible)
        #expect(reservation.kind == sample.kind)
        #expect(reservation.status == .confirmed)
        #expect(reservation.reservationId != nil)
        #expect(reservation.underName != nil)
        #expect(reservation.containerReference == reservation.reservationId)
        #expect(reservation.itemReference == reservation.reservationId)
        #expect(reservation.startTime?.zone == .given)
        #expect(resolution.normalized["reservationStatus"] == .string("https://schema.org/ReservationConfirmed"))
        #expect(resolution.normalized["@type"] == .string(sample.kind.schemaType))
        #expect(resolution.normalized["reservationId"] != nil)
        #expect(resolution.normalized["reservationNumber"] == nil)
        if sample.dialect == "apple" {
            #expect(resolution.warnings.isEmpty, "canonical markup needs no alias")
        } else {
            #expect(resolution.warnings.contains("markup.alias@reservationNumber"))
        }
    }

    @Test(arguments: [Samples.appleFlight, Samples.gmailFlight])
    func flightFields(json: String) throws {
        let reservation = try #require(try resolveOne(json).reservation)
        #expect(reservation.flightNumber == "UA110")
        #expect(reservation.provider == Reservation.Provider(name: "United", iataCode: "UA"))
        #expect(reservation.departure?.iataCode == "SFO")
        #expect(reservation.arrival?.iataCode == "EWR")
        #expect(reservation.startTime?.original == "2027-03-04T20:15:00-08:00")
        #expect(reservation.startTime?.utcOffsetSeconds == -8 * 3600)
        #expect(reservation.endTime?.utcOffsetSeconds == -5 * 3600)
        // 2027-03-05T04:15:00Z
        #expect(reservation.startTime?.instant == Date(timeIntervalSince1970: 1_804_220_100))
    }

    @Test func flightTicketAndSeat() throws {
        let reservation = try #require(try resolveOne(Samples.appleFlight).reservation)
        #expect(reservation.tickets == [Reservation.Ticket(ticketNumber: "0162345678901", seat: Reservation.Seat(number: "9A"))])
    }

    @Test func trainFields() throws {
        let reservation = try #require(try resolveOne(Samples.appleTrain).reservation)
        #expect(reservation.tripNumber == "ICE 597")
        #expect(reservation.provider?.name == "DB")
        #expect(reservation.departure?.name == "München Hbf")
        #expect(reservation.departure?.address?.countryCode == "DE")
        #expect(reservation.arrival?.name == "Berlin Hbf")
        #expect(reservation.tickets.first?.seat == Reservation.Seat(number: "27", seatingType: "1st Class"))
    }

    @Test func busUsesBusStopsAndName() throws {
        let reservation = try #require(try resolveOne(Samples.gmailBus).reservation)
        #expect(reservation.tripName == "Boston Express")
        #expect(reservation.provider?.name == "Bolt")
        #expect(reservation.departure?.name == "Port Authority")
    }

    @Test func boatFields() throws {
        let reservation = try #require(try resolveOne(Samples.appleBoat).reservation)
        #expect(reservation.name == "Harwich - Hoek")
        #expect(reservation.departure?.name == "Harwich")
        #expect(reservation.arrival?.address?.countryCode == "NL")
        #expect(reservation.endTime?.utcOffsetSeconds == 7200)
    }

    @Test(arguments: [Samples.appleRentalCar, Samples.gmailRentalCar])
    func rentalCarFields(json: String) throws {
        let reservation = try #require(try resolveOne(json).reservation)
        #expect(reservation.provider?.name == "Hertz")
        #expect(reservation.departure?.name == "Hertz SAN")
        #expect(reservation.arrival?.name == "Hertz LAX")
        #expect(reservation.name == "Economy")
        #expect(reservation.endTime?.original == "2027-08-06T20:00:00-07:00")
    }

    @Test(arguments: [Samples.appleLodging, Samples.gmailLodging])
    func lodgingFields(json: String) throws {
        let resolution = try resolveOne(json)
        let reservation = try #require(resolution.reservation)
        #expect(reservation.name == "Hilton Union Square")
        #expect(reservation.location?.address?.streetAddress == "1 Main St")
        #expect(reservation.startTime?.original == "2027-04-11T16:00:00-07:00")
        #expect(reservation.endTime?.original == "2027-04-13T11:00:00-07:00")
        #expect(resolution.normalized["checkinTime"] == .string("2027-04-11T16:00:00-07:00"))
        #expect(resolution.normalized["reservationFor"]?["@type"] == .string("LodgingBusiness"))
    }

    @Test(arguments: [Samples.appleRestaurant, Samples.gmailRestaurant])
    func restaurantFields(json: String) throws {
        let resolution = try resolveOne(json)
        let reservation = try #require(resolution.reservation)
        #expect(reservation.name == "Wagamama")
        #expect(reservation.partySize == 2)
        #expect(reservation.startTime?.original == "2027-04-10T19:00:00+01:00")
        #expect(reservation.location?.address?.countryCode == "GB")
        #expect(resolution.normalized["startTime"] == .string("2027-04-10T19:00:00+01:00"))
        #expect(resolution.normalized["reservationFor"]?["startDate"] == nil)
        #expect(resolution.normalized["reservationFor"]?["@type"] == .string("FoodEstablishment"))
    }

    @Test(arguments: [Samples.appleEvent, Samples.gmailEvent])
    func eventFieldsAndTicket(json: String) throws {
        let reservation = try #require(try resolveOne(json).reservation)
        #expect(reservation.name == "Foo Fighters Concert")
        #expect(reservation.location?.name == "AT&T Park")
        #expect(!reservation.isMovie)
        #expect(reservation.tickets.first?.ticketNumber == "abc123")
        #expect(reservation.tickets.first?.seat?.label == "101-A-12")
    }

    @Test func screeningEventIsAMovie() throws {
        let resolution = try resolveOne(Samples.appleMovie)
        let reservation = try #require(resolution.reservation)
        #expect(reservation.kind == .event)
        #expect(reservation.isMovie)
        #expect(resolution.admissible)
        #expect(resolution.normalized["reservationFor"]?["@type"] == .string("ScreeningEvent"))
        #expect(resolution.warnings.isEmpty)
    }

    @Test(arguments: ["ReservationPending", "ReservationHold", "http://schema.org/ReservationCancelled"])
    func otherStatusesAreKept(status: String) throws {
        let json = Samples.appleLodging.replacingOccurrences(
            of: "https://schema.org/ReservationConfirmed", with: status)
        let resolution = try resolveOne(json)
        #expect(resolution.admissible)
        let expected: Reservation.Status =
            status.hasSuffix("Pending") ? .pending : status.hasSuffix("Hold") ? .hold : .cancelled
        #expect(resolution.reservation?.status == expected)
        #expect(resolution.normalized["reservationStatus"] == .string(expected.schemaIRI))
    }
}
