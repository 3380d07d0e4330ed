import Foundation
import FuzzSupport
import MailMessage

@main enum FuzzMIMEMain {
    static func main() { exit(runLibFuzzer(fuzzMIME)) }
}

/// libFuzzer entry point for the MIME reader: the input is a whole message, as read from a file or SMTP.
///
/// Everything the admission path reads from a message is exercised: the header section, every part
/// of the MIME tree (decoded body and text), the markup parts, the addresses and the decoded header
/// values, once with the default limits and once with tight ones so the cut-off paths run too.
/// A trap, a sanitizer report, a timeout or a broken invariant below is a bug in `MailMessage`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMIME(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard let message = try? RawMessage(bytes: input) else { return 0 }

    precondition(message.bodyStart <= message.bytes.count, "body starts past the end")
    for field in message.headerFields {
        precondition(
            field.raw.startIndex >= 0 && field.raw.endIndex <= message.bodyStart, "field outside the header section")
        _ = field.unfoldedValue
        _ = field.decodedValue
        _ = MailAddress.list(in: field)
        if field.lowercasedName == "content-type" { _ = ContentType(parsing: field.rawValue) }
        if field.lowercasedName == "content-disposition" { _ = ContentDisposition(parsing: field.rawValue) }
    }
    _ = message.from
    _ = message.recipients()
    _ = message.value(of: "subject")

    for configuration in [
        MIMETree.Configuration(),
        MIMETree.Configuration(maxParts: 8, maxDepth: 3, maxDecodedBytesPerPart: 64, maxDecodedBytesTotal: 100),
    ] {
        let tree = message.mimeTree(configuration: configuration)
        let parts = tree.parts
        precondition(parts.count == tree.partCount, "parts walk and part count disagree")
        precondition(tree.partCount <= configuration.maxParts, "more parts than the limit")
        for part in parts {
            precondition(part.depth <= configuration.maxDepth, "part deeper than the limit")
            let body = part.decodedBody(limit: configuration.maxDecodedBytesPerPart)
            precondition(body.bytes.count <= configuration.maxDecodedBytesPerPart, "decoded body over its limit")
            _ = part.decodedText(limit: configuration.maxDecodedBytesPerPart)
            for field in part.headerFields { _ = field.decodedValue }
        }
        let markup = message.markupParts(configuration: configuration)
        precondition(markup.parts.count <= parts.count, "more markup parts than parts")
    }

    // What a DKIM l= tag does to the message: the cut copy must read the same way.
    let cut = message.truncatingBody(to: message.body.count / 2)
    precondition(cut.headerFields.count == message.headerFields.count, "cutting the body changed the header")
    _ = cut.markupParts()
    return 0
}
