package import Foundation
package import Hummingbird
package import Store

/// Every refusal the HTTP API makes: a status, a stable code, what was wrong and where, and what to do. The body is
/// `{"error": {"code", "message", "hint"?, "at"?}}` (documented in openapi.yaml as `Error`).
package struct APIError: HTTPResponseError, Sendable {
    package var status: HTTPResponse.Status
    package var code: String
    package var message: String
    package var hint: String?
    /// The parameter, header or property the problem is in.
    package var at: String?
    package var headers: HTTPFields = [:]
    /// The store's code when a store error caused this one (not shown to clients).
    package var storeCode: StoreError.Code?

    package init(_ status: HTTPResponse.Status, code: String, message: String, hint: String? = nil, at: String? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.hint = hint
        self.at = at
    }

    struct Body: Encodable {
        struct Detail: Encodable {
            var code: String
            var message: String
            var hint: String?
            var at: String?
        }
        var error: Detail
    }

    package func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers = self.headers
        headers[.contentType] = "application/json"
        let body = Body(error: .init(code: code, message: message, hint: hint, at: at))
        let data = (try? JSONCoding.encoder.encode(body)) ?? Data(#"{"error":{"code":"server.error"}}"#.utf8)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    // MARK: - The common ones

    static func missingToken(_ what: String) -> APIError {
        var error = APIError(
            .unauthorized, code: "auth.missing-token", message: "this endpoint needs \(what)",
            hint: "send Authorization: Bearer <token>", at: "Authorization")
        error.headers[.wwwAuthenticate] = #"Bearer realm="gateway""#
        return error
    }

    static var invalidToken: APIError {
        var error = APIError(
            .unauthorized, code: "auth.invalid-token", message: "the token is unknown or revoked",
            hint: "ask the gateway's operator for a new token", at: "Authorization")
        error.headers[.wwwAuthenticate] = #"Bearer realm="gateway", error="invalid_token""#
        return error
    }

    static func forbidden(_ message: String, hint: String? = nil) -> APIError {
        APIError(.forbidden, code: "auth.forbidden", message: message, hint: hint)
    }

    static func notFound(_ message: String) -> APIError {
        APIError(.notFound, code: "request.not-found", message: message)
    }

    static func invalid(_ message: String, at: String? = nil, hint: String? = nil) -> APIError {
        APIError(.badRequest, code: "request.invalid", message: message, hint: hint, at: at)
    }

    /// The body could not be read as HTTP framed it (a malformed chunk, the connection cut short).
    static func malformedBody(_ error: any Error) -> APIError {
        APIError(
            .badRequest, code: "request.malformed", message: "the request body could not be read (\(error))",
            hint: "send the body with a correct Content-Length or well-formed chunks")
    }

    static func tooLarge(limit: Int) -> APIError {
        APIError(
            .contentTooLarge, code: "request.too-large", message: "the body is over the limit of \(limit) bytes",
            hint: "send a smaller document")
    }

    static func busy(retryAfter: Int) -> APIError {
        var error = APIError(
            .tooManyRequests, code: "server.busy", message: "the gateway is at its limit of queued ingestions",
            hint: "try again after \(retryAfter) seconds")
        error.headers[.retryAfter] = String(retryAfter)
        return error
    }

    static var shuttingDown: APIError {
        var error = APIError(
            .serviceUnavailable, code: "server.shutting-down", message: "the gateway is shutting down",
            hint: "try again in a moment")
        error.headers[.retryAfter] = "5"
        return error
    }

    /// A store failure: the request may be retried.
    static func unavailable(_ error: any Error) -> APIError {
        var apiError = APIError(
            .serviceUnavailable, code: "server.store-unavailable", message: "the store could not answer: \(error)",
            hint: "try again; if it persists, check the server's log")
        apiError.headers[.retryAfter] = "5"
        apiError.storeCode = (error as? StoreError)?.code
        return apiError
    }
}

/// The JSON the API reads and writes: ISO 8601 dates, sorted keys, no escaped slashes.
package enum JSONCoding {
    package static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    package static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}
