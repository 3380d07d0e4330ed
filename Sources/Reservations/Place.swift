/// A place of a reservation: an airport, station, bus stop, boat terminal, pickup or dropoff
/// location, restaurant, hotel or venue (schema.org `Place` and its subtypes).
package struct Place: Codable, Sendable, Hashable {
    /// A schema.org `PostalAddress`.
    package struct Address: Codable, Sendable, Hashable {
        package var streetAddress: String?
        package var addressLocality: String?
        package var addressRegion: String?
        package var postalCode: String?
        /// As written: a code (`US`) or a name (`United Kingdom`).
        package var addressCountry: String?
        /// The ISO 3166-1 alpha-2 code `addressCountry` names, when it is recognized.
        package var countryCode: String?

        package init(
            streetAddress: String? = nil, addressLocality: String? = nil, addressRegion: String? = nil,
            postalCode: String? = nil, addressCountry: String? = nil, countryCode: String? = nil
        ) {
            self.streetAddress = streetAddress
            self.addressLocality = addressLocality
            self.addressRegion = addressRegion
            self.postalCode = postalCode
            self.addressCountry = addressCountry
            self.countryCode = countryCode
        }
    }

    /// A schema.org `GeoCoordinates` (`geo`): WGS 84 degrees.
    package struct Geo: Codable, Sendable, Hashable {
        package var latitude: Double
        package var longitude: Double

        package init(latitude: Double, longitude: Double) {
            self.latitude = latitude
            self.longitude = longitude
        }
    }

    /// `name`.
    package var name: String?
    /// An airport's IATA code (`SFO`), uppercased.
    package var iataCode: String?
    /// `address`, when given as a `PostalAddress` (or as one line of text, kept as `streetAddress`).
    package var address: Address?
    /// `telephone`.
    package var telephone: String?
    /// `geo`, when it gives a latitude within ±90 and a longitude within ±180.
    package var geo: Geo?

    package init(
        name: String? = nil, iataCode: String? = nil, address: Address? = nil, telephone: String? = nil, geo: Geo? = nil
    ) {
        self.name = name
        self.iataCode = iataCode
        self.address = address
        self.telephone = telephone
        self.geo = geo
    }
}
