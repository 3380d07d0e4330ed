/// The stable codes extraction reports. Tests and logs compare these, never message text.
extension Diagnostic.Code {
    // MARK: The document

    /// Error: the HTML document is larger than `Configuration.maxDocumentBytes`; nothing was read.
    package static let documentTooLarge = Diagnostic.Code("markup.document-too-large")
    /// Error: elements nest deeper than `Configuration.maxElementDepth` (256, libxml2's own limit); the
    /// parser stopped there, so markup after that point was not read. Markup found before it is kept.
    package static let documentTooDeep = Diagnostic.Code("markup.document-too-deep")
    /// Error: libxml2 stopped parsing early for another reason (its error code is in the message).
    package static let htmlParseStopped = Diagnostic.Code("markup.html-parse-stopped")
    /// Error: a start tag carries more attributes than `Configuration.maxAttributesPerElement`; the
    /// document was read only up to that tag (libxml2 2.9 checks duplicate attributes in quadratic time).
    package static let tooManyAttributes = Diagnostic.Code("markup.too-many-attributes")
    /// Warning: the declared or detected character encoding is unknown here; the bytes were read as
    /// UTF-8 (or windows-1252 where they are not valid UTF-8).
    package static let encodingUnsupported = Diagnostic.Code("markup.encoding-unsupported")
    /// Warning: more than 50 diagnostics of one code; the message says how many were left out.
    package static let diagnosticsOmitted = Diagnostic.Code("markup.diagnostics-omitted")
    /// Warning: bytes that are invalid in the document's encoding (or NUL bytes) were replaced by U+FFFD.
    package static let encodingInvalid = Diagnostic.Code("markup.encoding-invalid")

    /// Warning: a JSON-LD block or a Microdata item sits in a quoted or forwarded part of the message
    /// (a reply's `blockquote type="cite"`, Gmail's `gmail_quote`, Outlook's `divRplyFwdMsg`, a
    /// "-----Original Message-----" line, …): it is not this message's markup and was not read.
    package static let quotedPart = Diagnostic.Code("markup.quoted-part")

    // MARK: Limits shared by both syntaxes

    /// Error: more top-level items than `Configuration.maxItems`, or more nodes in all than
    /// `Configuration.maxNodes`; items found before the limit are kept.
    package static let tooManyItems = Diagnostic.Code("markup.too-many-items")
    /// Error: a JSON-LD block nests arrays and objects deeper than `Configuration.maxJSONDepth`.
    package static let jsonTooDeep = Diagnostic.Code("markup.json-too-deep")
    /// Error: a text value or property name is longer than `Configuration.maxStringLength`; that value
    /// was left out, the rest of its item kept.
    package static let stringTooLong = Diagnostic.Code("markup.string-too-long")

    // MARK: JSON-LD

    /// Error: a JSON-LD block is larger than `Configuration.maxJSONLDBlockBytes`; it was skipped.
    package static let jsonLDTooLarge = Diagnostic.Code("markup.jsonld-too-large")
    /// Warning: a JSON-LD block was not valid JSON but was read after repair (wrappers and comments
    /// stripped, entities decoded, commas missing, doubled or trailing, raw control characters, several
    /// values, text after the value); the message lists each repair with its position.
    package static let jsonLDRepaired = Diagnostic.Code("markup.jsonld-repaired")
    /// Error: a JSON-LD block is not valid JSON and nothing in it could be read; the message gives the position.
    package static let jsonLDInvalid = Diagnostic.Code("markup.jsonld-invalid")
    /// Error: part of a JSON-LD block (an object that does not parse, a value cut off) was not read;
    /// the rest of the block was. The message gives the part's start and end.
    package static let jsonLDDropped = Diagnostic.Code("markup.jsonld-dropped")
    /// Warning: a JSON-LD object gives a name twice; the last value was read, as JSON parsers do.
    package static let jsonLDDuplicateKey = Diagnostic.Code("markup.jsonld-duplicate-key")
    /// Warning: a JSON-LD block is empty, or holds a value that is not a node (a string at top level).
    package static let jsonLDNoNode = Diagnostic.Code("markup.jsonld-no-node")

    // MARK: Microdata

    /// Warning: an `itemtype` token is not an absolute URL (`FoodEstablishmentReservation`); kept as written.
    package static let microdataBareItemtype = Diagnostic.Code("markup.microdata-bare-itemtype")
    /// Warning: an item is (through `itemref`) a property of itself; that value was left out.
    package static let microdataItemCycle = Diagnostic.Code("markup.microdata-item-cycle")
    /// Error: items nest deeper than `Configuration.maxItemDepth`; the deeper items were left out.
    package static let microdataTooDeep = Diagnostic.Code("markup.microdata-too-deep")
    /// Warning: the HTML parser ended an item's element (or a property's) before the end tag the sender
    /// wrote for it (a `<div>` inside `<p itemscope>`); what was written up to that end tag was read as
    /// part of it. Fix the HTML's nesting.
    package static let microdataMisnested = Diagnostic.Code("markup.microdata-misnested")
    /// Error: crawling items and their `itemref`s took more than `Configuration.maxMicrodataSteps`
    /// element visits; items found before are kept.
    package static let microdataTooComplex = Diagnostic.Code("markup.microdata-too-complex")
}
