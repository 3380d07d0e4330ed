import Markup
import Reservations
import Testing

/// Resolves JSON-LD text with the default configuration.
func resolve(_ json: String, syntax: SchemaNode.Syntax = .jsonLD) throws -> [Resolution] {
    ReservationResolver().resolve(try GraphBuilder.graph(json, syntax: syntax))
}

/// Resolves JSON-LD text expected to hold exactly one reservation.
func resolveOne(_ json: String, syntax: SchemaNode.Syntax = .jsonLD) throws -> Resolution {
    let resolutions = try resolve(json, syntax: syntax)
    try #require(resolutions.count == 1)
    return resolutions[0]
}

func resolveOne(object: [String: Any], syntax: SchemaNode.Syntax = .jsonLD) throws -> Resolution {
    let resolutions = ReservationResolver().resolve(GraphBuilder.graph(object, syntax: syntax))
    try #require(resolutions.count == 1)
    return resolutions[0]
}

extension Resolution {
    /// The codes of the diagnostics at `path`.
    func codes(at path: String) -> Set<String> {
        Set(diagnostics.filter { $0.path == path }.map(\.code.rawValue))
    }

    /// `code@path` for every diagnostic of the given severity.
    func entries(_ severity: Diagnostic.Severity) -> Set<String> {
        Set(diagnostics.filter { $0.severity == severity }.map { "\($0.code.rawValue)@\($0.path)" })
    }

    var errors: Set<String> { entries(.error) }
    var warnings: Set<String> { entries(.warning) }
}
