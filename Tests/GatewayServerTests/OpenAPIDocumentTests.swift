import Foundation
import GatewayServer
import Hummingbird
import HummingbirdTesting
import Testing
import Yams

/// Keeps Resources/openapi.yaml — the reference booking services read — in step with the routes
/// `GatewayApplication.router` registers: the same operations, each with its responses and security stated, every
/// reference resolving, and the security it states being the security the server enforces. Schemathesis checks the
/// schemas against a running server (GatewayIntegrationTests).
@Suite("OpenAPI document")
struct OpenAPIDocumentTests {
    static let methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

    /// The document as the server serves it.
    static func document() throws -> [String: Any] {
        let text = String(decoding: OpenAPIDocument.bytes, as: UTF8.self)
        return try #require(try Yams.load(yaml: text) as? [String: Any], "openapi.yaml is not a YAML mapping")
    }

    /// One operation of the document.
    struct Operation: CustomStringConvertible {
        var method: String
        var path: String
        var object: [String: Any]
        /// Path-level parameters followed by the operation's own.
        var parameters: [[String: Any]]
        var description: String { "\(method.uppercased()) \(path)" }
    }

    static func operations(_ document: [String: Any]) throws -> [Operation] {
        let paths = try #require(document["paths"] as? [String: Any], "the document has no paths")
        var operations: [Operation] = []
        for (path, value) in paths.sorted(by: { $0.key < $1.key }) {
            let item = try #require(value as? [String: Any], "\(path) is not a path item")
            let shared = item["parameters"] as? [[String: Any]] ?? []
            for method in methods {
                guard let object = item[method] else { continue }
                let operation = try #require(object as? [String: Any], "\(method) \(path) is not an operation")
                let own = operation["parameters"] as? [[String: Any]] ?? []
                operations.append(Operation(method: method, path: path, object: operation, parameters: shared + own))
            }
        }
        return operations
    }

    /// A parameter object, through its `$ref` when it has one.
    static func resolved(_ object: [String: Any], in document: [String: Any]) throws -> [String: Any] {
        guard let reference = object["$ref"] as? String else { return object }
        return try #require(Self.pointer(reference, in: document) as? [String: Any], "\(reference) does not resolve")
    }

    /// The value a local reference (`#/components/...`, RFC 6901 JSON pointer) points at, or nil.
    static func pointer(_ reference: String, in document: [String: Any]) -> Any? {
        guard reference.hasPrefix("#/") else { return nil }
        var node: Any = document
        for token in reference.dropFirst(2).split(separator: "/", omittingEmptySubsequences: false) {
            let key = token.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
            if let mapping = node as? [String: Any], let next = mapping[key] {
                node = next
            } else if let array = node as? [Any], let index = Int(key), array.indices.contains(index) {
                node = array[index]
            } else {
                return nil
            }
        }
        return node
    }

    // MARK: - The document's shape

    @Test func isAnOpenAPI31DocumentWithInfoAndSecuritySchemes() throws {
        let text = String(decoding: OpenAPIDocument.bytes, as: UTF8.self)
        #expect(text.hasPrefix("openapi: 3.1.0\n"))
        let document = try Self.document()
        let info = try #require(document["info"] as? [String: Any])
        #expect(info["title"] is String && info["version"] is String)
        let schemes = try #require((document["components"] as? [String: Any])?["securitySchemes"] as? [String: Any])
        let bearer = try #require(schemes["bearerToken"] as? [String: Any])
        #expect(bearer["type"] as? String == "http" && bearer["scheme"] as? String == "bearer")
        let query = try #require(schemes["calendarToken"] as? [String: Any])
        #expect(query["type"] as? String == "apiKey" && query["in"] as? String == "query" && query["name"] as? String == "token")
    }

    @Test func documentsExactlyTheRoutesTheServerRegisters() async throws {
        let fixture = try await ServerFixture()
        // The console's pages are HTML for people, not API operations (ConsoleRouteTests and the browser tests cover them).
        let routes = Set(
            GatewayApplication.router(fixture.services).routes.map { "\($0.method.rawValue) \($0.path.description)" }
                .filter { !$0.contains(" /console") })
        let documented = Set(try Self.operations(try Self.document()).map(\.description))
        #expect(routes.count >= 24)
        #expect(routes.subtracting(documented).isEmpty, "routes the document lacks: \(routes.subtracting(documented).sorted())")
        #expect(documented.subtracting(routes).isEmpty, "operations no route serves: \(documented.subtracting(routes).sorted())")
    }

    @Test func everyOperationStatesItsResponsesSecurityAndRoles() throws {
        let document = try Self.document()
        let schemes = Set(((document["components"] as? [String: Any])?["securitySchemes"] as? [String: Any] ?? [:]).keys)
        var operationIDs: [String] = []
        for operation in try Self.operations(document) {
            let object = operation.object
            let id = try #require(object["operationId"] as? String, "\(operation) has no operationId")
            operationIDs.append(id)
            #expect((object["summary"] as? String)?.isEmpty == false, "\(operation) has no summary")
            #expect((object["description"] as? String)?.isEmpty == false, "\(operation) has no description")
            #expect((object["tags"] as? [String])?.isEmpty == false, "\(operation) has no tags")

            let responses = try #require(object["responses"] as? [String: Any], "\(operation) states no responses")
            #expect(!responses.isEmpty, "\(operation) states no responses")
            for status in responses.keys {
                #expect(Int(status).map { (100...599).contains($0) } == true, "\(operation): '\(status)' is not a status code")
            }
            #expect(responses.keys.contains { $0.hasPrefix("2") }, "\(operation) has no success response")

            // Security stated on every operation (empty: open), with the roles that may call it.
            let security = try #require(object["security"] as? [Any], "\(operation) does not state its security")
            let roles = try #require(object["x-roles"] as? [String], "\(operation) does not state its roles (x-roles)")
            for requirement in security {
                let names = try #require(requirement as? [String: Any], "\(operation): a security requirement is not a mapping")
                for name in names.keys { #expect(schemes.contains(name), "\(operation) names an unknown scheme \(name)") }
            }
            #expect(security.isEmpty == roles.isEmpty, "\(operation): security and x-roles disagree")
            #expect(Set(roles).isSubset(of: ["admin", "sender", "owner", "app"]), "\(operation): unknown role in \(roles)")
            if !security.isEmpty {
                #expect(responses["401"] != nil, "\(operation) takes a token but states no 401")
                let description = object["description"] as? String ?? ""
                #expect(description.hasPrefix("**Role: "), "\(operation): the description does not open with its roles")
                for role in roles {
                    #expect(description.contains(role), "\(operation): the description does not name the role \(role)")
                }
            }
        }
        #expect(Set(operationIDs).count == operationIDs.count, "operationIds repeat: \(operationIDs.sorted())")
    }

    @Test func pathTemplatesAndPathParametersMatch() throws {
        let document = try Self.document()
        for operation in try Self.operations(document) {
            var templated: Set<String> = []
            var rest = operation.path[...]
            while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
                templated.insert(String(rest[rest.index(after: open)..<close]))
                rest = rest[rest.index(after: close)...]
            }
            let parameters = try operation.parameters.map { try Self.resolved($0, in: document) }
            let inPath = parameters.filter { $0["in"] as? String == "path" }
            #expect(Set(inPath.compactMap { $0["name"] as? String }) == templated, "\(operation): path parameters differ from the template")
            for parameter in inPath {
                #expect(parameter["required"] as? Bool == true, "\(operation): path parameter \(parameter["name"] ?? "?") is not required")
                #expect(parameter["example"] != nil, "\(operation): path parameter \(parameter["name"] ?? "?") has no example")
            }
            for parameter in parameters {
                #expect(parameter["schema"] != nil, "\(operation): parameter \(parameter["name"] ?? "?") has no schema")
            }
        }
    }

    @Test func everyReferenceResolves() throws {
        let document = try Self.document()
        var references: [String] = []
        var stack: [Any] = [document]
        var visited = 0
        while let node = stack.popLast() {
            visited += 1
            try #require(visited < 1_000_000, "the document does not end")
            if let mapping = node as? [String: Any] {
                if let reference = mapping["$ref"] as? String { references.append(reference) }
                stack.append(contentsOf: mapping.values)
            } else if let array = node as? [Any] {
                stack.append(contentsOf: array)
            }
        }
        #expect(references.count > 50)
        for reference in Set(references) {
            #expect(Self.pointer(reference, in: document) != nil, "\(reference) does not resolve")
        }
        // Every schema, response, parameter and header the components define is used.
        let components = try #require(document["components"] as? [String: Any])
        for section in ["schemas", "responses", "parameters", "headers", "requestBodies"] {
            for name in (components[section] as? [String: Any] ?? [:]).keys {
                #expect(references.contains("#/components/\(section)/\(name)"), "components/\(section)/\(name) is never used")
            }
        }
    }

    // MARK: - The document against the server

    /// The security each operation states is what the server enforces: without a token, every operation that states
    /// a scheme answers 401 (`auth.missing-token`, with `WWW-Authenticate`), and every open one answers 200.
    @Test func statedSecurityIsEnforced() async throws {
        let document = try Self.document()
        let operations = try Self.operations(document)
        var calls: [(operation: String, method: HTTPRequest.Method, uri: String, secured: Bool)] = []
        for operation in operations {
            var uri = operation.path
            for parameter in try operation.parameters.map({ try Self.resolved($0, in: document) }) where parameter["in"] as? String == "path" {
                let name = try #require(parameter["name"] as? String)
                let example = try #require(parameter["example"], "\(operation): \(name) has no example")
                uri = uri.replacingOccurrences(of: "{\(name)}", with: "\(example)")
            }
            let method = try #require(HTTPRequest.Method(operation.method.uppercased()))
            let secured = !(operation.object["security"] as? [Any] ?? []).isEmpty
            calls.append((operation.description, method, uri, secured))
        }
        let fixture = try await ServerFixture()
        try await fixture.test { [calls] client in
            for call in calls {
                let response = try await client.call(call.method, call.uri, token: nil)
                if call.secured {
                    #expect(response.status == .unauthorized, "\(call.operation) answered \(response.status) without a token")
                    #expect(response.errorCode == "auth.missing-token", "\(call.operation)")
                    #expect(response.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true, "\(call.operation)")
                } else {
                    #expect(response.status == .ok, "\(call.operation) is documented as open but answered \(response.status)")
                }
            }
        }
    }

    /// The document's `Error` schema names the members an API error has.
    @Test func errorSchemaMatchesTheErrorBody() async throws {
        let document = try Self.document()
        let detail = try #require(
            (Self.pointer("#/components/schemas/Error/properties/error/properties", in: document) as? [String: Any]))
        let members = Set(detail.keys)
        #expect(members == ["code", "message", "hint", "at"])
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            let response = try await client.call(.get, "/v1/domains?status=unknown")
            #expect(response.status == .badRequest)
            let error = try #require(response.object["error"] as? [String: Any])
            #expect(Set(error.keys).isSubset(of: members) && error["code"] is String && error["message"] is String)
            #expect(Set(response.object.keys) == ["error"])
        }
    }
}
