import Foundation
import Hummingbird
import MailMessage

/// A form the console's pages post: `application/x-www-form-urlencoded`, or `multipart/form-data` (RFC 7578) when it
/// carries a file. The multipart body is split by MailMessage's MIME reader, the one place the gateway reads MIME.
struct ConsoleForm: Sendable {
    /// An uploaded file: its name as the browser sent it, and its bytes exactly.
    struct File: Sendable {
        var filename: String
        var bytes: [UInt8]
    }

    private(set) var fields: [String: [String]] = [:]
    private(set) var files: [String: File] = [:]

    /// The first value of `name`, nil when absent.
    subscript(_ name: String) -> String? { fields[name]?.first }

    /// The first value of `name`, trimmed; nil when absent or empty.
    func text(_ name: String) -> String? {
        guard let value = self[name]?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty else { return nil }
        return value
    }

    /// Reads the request's form body, at most `limit` bytes.
    /// - Throws: ``ConsoleError`` `request.too-large`, `request.malformed`, or `request.invalid` for another content type.
    static func read(_ request: Request, limit: Int, services: GatewayServices) async throws -> ConsoleForm {
        let bytes: [UInt8]
        do {
            bytes = try await services.body(of: request, limit: limit)
        } catch let error as APIError {
            throw ConsoleError(error)
        }
        let contentType = request.headers[.contentType].flatMap { ContentType(parsing: $0) }
        switch contentType?.mediaType {
        case "application/x-www-form-urlencoded":
            return ConsoleForm(urlEncoded: String(decoding: bytes, as: UTF8.self))
        case "multipart/form-data":
            guard let boundary = contentType?.boundary, !boundary.isEmpty else {
                throw ConsoleError(.badRequest, code: "request.malformed", message: "the form has no multipart boundary")
            }
            return try ConsoleForm(multipart: bytes, boundary: boundary)
        default:
            throw ConsoleError(
                .unsupportedMediaType, code: "request.invalid",
                message: "the console's forms are sent as a browser sends them (urlencoded or multipart/form-data)")
        }
    }

    /// `a=1&b=two+words&c=%3C` (the WHATWG application/x-www-form-urlencoded parser).
    init(urlEncoded text: String) {
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ part: Substring) -> String {
                let spaced = part.replacingOccurrences(of: "+", with: " ")
                return spaced.removingPercentEncoding ?? spaced
            }
            let name = decode(parts[0])
            fields[name, default: []].append(parts.count > 1 ? decode(parts[1]) : "")
        }
    }

    /// The parts of a multipart/form-data body: a part with a `filename` is a file, the others text fields.
    init(multipart bytes: [UInt8], boundary: String) throws {
        // The body is a MIME multipart entity: give it the header that names its boundary and read it as one.
        let header = Array("Content-Type: multipart/form-data; boundary=\"\(boundary)\"\r\n\r\n".utf8)
        let entity: RawMessage
        do {
            entity = try RawMessage(bytes: header + bytes)
        } catch {
            throw ConsoleError(.badRequest, code: "request.malformed", message: "the form could not be read")
        }
        let tree = entity.mimeTree(configuration: MIMETree.Configuration(maxParts: 16, maxDepth: 1))
        for part in tree.root.children {
            guard let field = part.fields(named: "Content-Disposition").first,
                let disposition = ContentDisposition(parsing: field.rawValue), disposition.type == "form-data",
                let name = disposition.parameters["name"]
            else { continue }
            if let filename = disposition.filename {
                files[name] = File(filename: filename, bytes: Array(part.body))
            } else {
                fields[name, default: []].append(String(decoding: part.body, as: UTF8.self))
            }
        }
    }

    /// A file field's bytes, nil when absent or empty (a file input left empty still sends an empty part).
    func file(_ name: String) -> File? {
        guard let file = files[name], !file.bytes.isEmpty else { return nil }
        return file
    }
}
