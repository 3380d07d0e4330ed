/// The MIME structure of a message (RFC 2045, RFC 2046), read leniently and within limits.
///
/// Every multipart/* type is split the same way (alternative, related, mixed, signed, digest and
/// unknown ones, RFC 2046 §5.1.3 and §5.1.7), at any depth up to `Configuration.maxDepth`;
/// message/rfc822 parts are parsed as messages and flagged as attached. Reading never fails: what
/// is wrong becomes a `MIMEWarning` and the reader goes on as the warning says.
package struct MIMETree: Sendable {
    /// Limits that keep hostile messages (part bombs, nesting bombs, huge bodies) bounded.
    package struct Configuration: Sendable, Hashable {
        /// Most parts read; the rest are skipped with `mime.too-many-parts`.
        package var maxParts: Int
        /// Deepest nesting descended into (multipart or message/rfc822 levels); at most 256, so
        /// that recursion stays within any thread's stack. Deeper parts are leaves (`mime.too-deep`).
        package var maxDepth: Int
        /// Most bytes one part decodes to; more is cut with `mime.part-too-large`.
        package var maxDecodedBytesPerPart: Int
        /// Most bytes all decoded parts together may take; later parts are skipped
        /// with `mime.total-too-large`.
        package var maxDecodedBytesTotal: Int
        /// Whether the message inside a message/rfc822 part is read (decoded, if it was sent encoded, and parsed).
        /// Markup is never taken from it, so a reader that wants only the markup parts (the prefilter) skips it:
        /// the attached message is then a leaf, and its parts count against none of the limits.
        package var readsAttachedMessages: Bool

        package init(
            maxParts: Int = 1000, maxDepth: Int = 32, maxDecodedBytesPerPart: Int = 16 << 20,
            maxDecodedBytesTotal: Int = 64 << 20, readsAttachedMessages: Bool = true
        ) {
            self.maxParts = maxParts
            self.maxDepth = maxDepth
            self.maxDecodedBytesPerPart = maxDecodedBytesPerPart
            self.maxDecodedBytesTotal = maxDecodedBytesTotal
            self.readsAttachedMessages = readsAttachedMessages
        }

        /// The hard ceiling on `maxDepth`.
        package static let depthCeiling = 256
    }

    /// The message itself as a part.
    package let root: MIMEPart
    /// What was wrong with the structure, in the order it was found.
    package let warnings: [MIMEWarning]
    /// How many parts were read (the root included).
    package let partCount: Int

    /// Reads the MIME structure of `message`.
    package init(message: RawMessage, configuration: Configuration = Configuration()) {
        self.init(headerFields: message.headerFields, body: message.body, configuration: configuration)
    }

    /// Reads the MIME structure of a message given as its header fields and its body.
    init(headerFields: [HeaderField], body: ArraySlice<UInt8>, configuration: Configuration) {
        var builder = MIMETreeBuilder(configuration: configuration)
        root = builder.message(headerFields: headerFields, body: body)
        warnings = builder.warnings
        partCount = builder.partCount
    }

    /// Every part in document order (depth first, parents before their children).
    package var parts: [MIMEPart] {
        var result: [MIMEPart] = []
        result.reserveCapacity(partCount)
        var stack = [root]
        while let part = stack.popLast() {
            result.append(part)
            stack.append(contentsOf: part.children.reversed())
        }
        return result
    }
}

extension RawMessage {
    /// The MIME structure of this message.
    package func mimeTree(configuration: MIMETree.Configuration = MIMETree.Configuration()) -> MIMETree {
        MIMETree(message: self, configuration: configuration)
    }
}
