/// Why a zone file could not be read; `line` points at the offending record (1-based, 0 for the whole file).
package struct ZoneFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Stable: codes appear in logs and in the command line's error output.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        package let description: String
        private init(_ code: String) { description = code }
        /// The file could not be opened or read.
        package static let unreadableFile = Code("zone.unreadable-file")
        /// A record or directive does not follow RFC 1035 §5.1 (missing type, stray token, ...).
        package static let syntax = Code("zone.syntax")
        /// A quoted string has no closing quote on its line.
        package static let unterminatedString = Code("zone.unterminated-string")
        /// A `)` without `(`, a nested `(`, or a `(` still open at the end of the file.
        package static let unbalancedParentheses = Code("zone.unbalanced-parentheses")
        /// A `\` escape that is not `\X` or `\DDD` with DDD ≤ 255 (RFC 1035 §5.1).
        package static let invalidEscape = Code("zone.invalid-escape")
        /// An owner or `$ORIGIN` that is not a valid domain name.
        package static let invalidName = Code("zone.invalid-name")
        /// A relative name (or `@`) with no `$ORIGIN` in effect.
        package static let missingOrigin = Code("zone.missing-origin")
        /// A TTL that is not a number of seconds (or BIND units: 1h30m) up to 2^31 − 1 (RFC 2181 §8).
        package static let invalidTTL = Code("zone.invalid-ttl")
        /// A class other than IN.
        package static let unsupportedClass = Code("zone.unsupported-class")
        /// `$INCLUDE`, `$GENERATE` or an unknown `$` directive.
        package static let unsupportedDirective = Code("zone.unsupported-directive")
    }

    package var code: Code
    /// The line the problem starts on, counting from 1; 0 when it concerns the whole file.
    package var line: Int
    package var reason: String

    package init(code: Code, line: Int, reason: String) {
        self.code = code
        self.line = line
        self.reason = reason
    }

    package var description: String { line > 0 ? "\(code) at line \(line): \(reason)" : "\(code): \(reason)" }
}
