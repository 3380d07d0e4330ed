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
        let html = library.render(object, withTemplate: name) ?? "template \(name) is missing"
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
