package import Markup

/// Everything resolution made of one document: a resolution per reservation item found, and the
/// diagnostics that concern the document rather than one item (limits reached).
package struct ResolvedDocument: Sendable, Hashable, Codable {
    /// One per distinct reservation item, in document order.
    package var resolutions: [Resolution]
    /// Limits reached while walking the graph (`markup.limit-exceeded`).
    package var diagnostics: [Diagnostic]

    package init(resolutions: [Resolution] = [], diagnostics: [Diagnostic] = []) {
        self.resolutions = resolutions
        self.diagnostics = diagnostics
    }
}
