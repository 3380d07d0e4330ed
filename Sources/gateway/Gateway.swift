import ArgumentParser
import Foundation
import Glibc
import MailMessage

@main
struct Gateway: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gateway",
        abstract: "Admits schema.org reservation markup only from trusted, registered sources.",
        discussion: """
            Emails must carry a valid DKIM signature from the sending domain; pages must be fetched over HTTPS.

            Exit status: 0 on success, 1 when the input was refused or did not pass, 2 for usage errors.
            """,
        subcommands: [
            RegisterCommand.self, DomainsCommand.self, FlagsCommand.self, IngestCommand.self, CheckCommand.self,
            RetryCommand.self, LogCommand.self, ReservationsCommand.self, DKIMCommand.self, ExtractCommand.self,
            ServeCommand.self, TokensCommand.self, StoreCommand.self, ChangesCommand.self, WebhooksCommand.self,
            OwnersCommand.self,
        ]
    )

    /// Runs the command; usage errors exit with status 2, failures with 1 (ArgumentParser's own
    /// default for usage errors is 64, which scripts do not expect).
    static func main() async {
        MallocTuning.fixMmapThreshold()
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let failure as CommandFailure {
            Terminal.error(failure.message)
            Foundation.exit(failure.status)
        } catch {
            let code = exitCode(for: error)
            if code == .validationFailure {
                Terminal.error(fullMessage(for: error), prefixed: false)
                Foundation.exit(2)
            }
            exit(withError: error)
        }
    }
}

/// A command that could not do its job: one clear line on stderr and a non-zero status.
struct CommandFailure: Error {
    var message: String
    var status: Int32 = 1
}

/// Where the command line writes. Library targets never print; this file is the one place that does.
enum Terminal {
    static func error(_ message: String, prefixed: Bool = true) {
        FileHandle.standardError.write(Data(((prefixed ? "gateway: " : "") + message + "\n").utf8))
    }

    static func write(_ text: String) {
        do {
            try FileHandle.standardOutput.write(contentsOf: Data(text.utf8))
        } catch {
            // The reader went away (`gateway reservations list | head`): stop quietly, as a closed pipe asks.
            Foundation.exit(0)
        }
    }

    static func line(_ text: String = "") {
        write(text + "\n")
    }

    /// Encodes one JSON value on one line, keys sorted, slashes unescaped, times in ISO 8601
    /// (the default would be seconds since 2001, which every reader takes for a Unix time).
    static func json<Value: Encodable>(_ value: Value) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        line(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    /// Reads and parses a message; an unreadable file or one that is not a message is a usage error.
    static func readMessage(_ path: String) throws(CommandFailure) -> RawMessage {
        let bytes = try read(path)
        do {
            return try RawMessage(bytes: bytes)
        } catch {
            throw CommandFailure(message: "\(path): \(error)", status: 2)
        }
    }

    /// Reads a file, or standard input for `-`. A file is read straight into the array (its size from `fstat`),
    /// never held twice: a 25 MB message costs 25 MB.
    static func read(_ path: String) throws(CommandFailure) -> [UInt8] {
        if path == "-" {
            return [UInt8](FileHandle.standardInput.readDataToEndOfFile())
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        var status = stat()
        guard descriptor >= 0, fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            if descriptor >= 0 { close(descriptor) }
            throw CommandFailure(message: "cannot read \(path): no such file or not readable", status: 2)
        }
        defer { close(descriptor) }
        var failed = false
        var bytes = [UInt8](unsafeUninitializedCapacity: Int(status.st_size)) { buffer, count in
            count = 0
            while count < buffer.count {
                let result = Glibc.read(descriptor, buffer.baseAddress! + count, buffer.count - count)
                if result > 0 {
                    count += result
                } else if result == 0 || errno != EINTR {
                    failed = result < 0
                    return
                }
            }
        }
        guard !failed else { throw CommandFailure(message: "cannot read \(path): \(String(cString: strerror(errno)))", status: 2) }
        // A file that grew while it was read: the rest too.
        while true {
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            let result = Glibc.read(descriptor, &chunk, chunk.count)
            guard result > 0 else { break }
            bytes += chunk[..<result]
        }
        return bytes
    }
}
