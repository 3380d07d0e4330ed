package import Foundation

/// The repository's `certs/` folder: the development CA and the test site's certificates
/// (certs/README.md). Test fixtures only.
package enum Certificates {
    package static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("certs")

    /// The absolute path of `name` in `certs/`.
    package static func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// What `openssl x509 -fingerprint -sha256` says, lowercase hex without colons: an
    /// independent check of the fingerprint the fetcher computes.
    package static func opensslFingerprint(_ name: String) throws -> String {
        let output = try run("/usr/bin/openssl", ["x509", "-in", path(name), "-noout", "-fingerprint", "-sha256"])
        guard let value = output.split(separator: "=").last, output.contains("=") else {
            throw FixtureError("openssl x509 -fingerprint printed no fingerprint for \(name): \(output)")
        }
        return value.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: ":", with: "")
            .lowercased()
    }

    /// Runs a short command and returns its standard output.
    static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
