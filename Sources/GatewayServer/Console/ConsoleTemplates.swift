import Foundation
import Hummingbird
import Mustache
import NIOCore

/// The console's templates and static files (Resources/Console): Mustache templates rendered with HTML escaping on
/// every value (the templates use `{{name}}` only, never the unescaped forms: `ConsoleTemplateTests` checks), one
/// stylesheet and one small script.
struct ConsoleTemplates: Sendable {
    let library: MustacheLibrary
    /// `console.css`, `console.js`: name → bytes.
    let assets: [String: [UInt8]]

    /// The templates bundled with the server, read once.
    static let bundled: ConsoleTemplates = {
        do {
            return try ConsoleTemplates(directory: resourceDirectory())
        } catch {
            // A build without its resources is broken; every page says so rather than the server crashing.
            var library = MustacheLibrary()
            try? library.register("console templates missing: \(error)", named: "error")
            return ConsoleTemplates(library: library, assets: [:])
        }
    }()

    static func resourceDirectory() throws -> URL {
        guard let url = Bundle.module.url(forResource: "Console", withExtension: nil) else {
            throw ConsoleError(.internalServerError, code: "server.error", message: "Resources/Console is missing")
        }
        return url
    }

    /// Every `*.mustache` in `directory` (named by file name without extension), and its `.css` and `.js` files.
    init(directory: URL) throws {
        var library = MustacheLibrary()
        var assets: [String: [UInt8]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() {
            let url = directory.appendingPathComponent(name)
            if name.hasSuffix(".mustache") {
                try library.register(String(contentsOf: url, encoding: .utf8), named: String(name.dropLast(9)))
            } else if name.hasSuffix(".css") || name.hasSuffix(".js") {
                assets[name] = try [UInt8](Data(contentsOf: url))
            }
        }
        self.init(library: library, assets: assets)
    }

    init(library: MustacheLibrary, assets: [String: [UInt8]]) {
        self.library = library
        self.assets = assets
    }

    /// `object` rendered with template `name`, as an HTML response.
    func page(_ name: String, _ object: Any, status: HTTPResponse.Status = .ok) -> Response {
        let html = library.render(ConsoleReflected.wrap(object) ?? object, withTemplate: name) ?? "template \(name) is missing"
        return Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// A static file.
    func asset(_ name: String) -> Response? {
        guard let bytes = assets[name] else { return nil }
        let type = name.hasSuffix(".css") ? "text/css; charset=utf-8" : "text/javascript; charset=utf-8"
        return Response(
            status: .ok, headers: [.contentType: type, .cacheControl: "public, max-age=300"],
            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

/// A view model as the templates read it: its stored properties reflected once, into a dictionary, and so on down.
/// swift-mustache reads a plain value by reflecting all of it again for every name it looks up (and for every
/// enclosing value a name is looked up in): with 50 log rows or a few dozen cards that was most of a page's time.
/// What the templates see does not change: the same names and values, and a property that is nil is absent (as
/// swift-mustache's own reflection unwraps it).
struct ConsoleReflected: MustacheParent {
    let fields: [String: Any]

    init(_ value: Any) {
        var fields: [String: Any] = [:]
        for child in Mirror(reflecting: value).children {
            guard let label = child.label else { continue }
            if let wrapped = Self.wrap(child.value) { fields[label] = wrapped }
        }
        self.fields = fields
    }

    func child(named name: String) -> Any? { fields[name] }

    /// Structures become ``ConsoleReflected`` (inside optionals and arrays too); everything else stays as it is.
    static func wrap(_ value: Any) -> Any? {
        switch value {
        case is String, is Bool, is Int, is Int64: return value
        default: break
        }
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .optional:
            guard let wrapped = mirror.children.first?.value else { return nil }
            return wrap(wrapped)
        case .struct:
            return ConsoleReflected(value)
        case .collection:
            return mirror.children.compactMap { wrap($0.value) }
        default:
            return value
        }
    }
}
