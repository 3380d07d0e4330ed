/// A test fixture could not be set up; the reason says what is missing and how to fix it.
package struct FixtureError: Error, Sendable, CustomStringConvertible {
    package var reason: String

    package init(_ reason: String) {
        self.reason = reason
    }

    package var description: String { "fixture: \(reason)" }
}
