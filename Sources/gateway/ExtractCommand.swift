import Admission
import ArgumentParser
import Foundation
import Markup
import Reservations
import Sandbox

/// `gateway extract FILE|DIRECTORY|- ... [--json]`: what senders' markup turns into, before any authentication.
/// Each document is extracted in the sandbox like every other path, then resolved; nothing is stored. Many files
/// (and directories, read recursively) go through one pool of workers, several at a time, and print in the order
/// given: extraction can be scripted and measured outside the benchmark.
struct ExtractCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "extract",
        abstract: "Print every reservation found in emails or HTML files, and the diagnostics.",
        discussion: """
            Each file is a message (.eml, possibly with an mbox "From " line) or an HTML page, told apart by its \
            content: a message starts with header fields ("Name: value" lines), HTML with "<" (after a byte \
            order mark or white space); a JSON-LD document starting with "{" or "[" is read too. A directory \
            stands for the .eml, .html, .htm and .jsonld files under it (recursively, hidden ones left \
            out, in name order). Every reservation \
            found is listed, admissible or not, with the diagnostics that say what to fix. No DKIM check, no \
            store: this shows what the markup says, not whether it would be admitted.

            With --json: one JSON object per file, one per line: {"file", "kind", "reservations": [...], \
            "diagnostics": [...]}; each reservation is its normalized schema.org JSON-LD object plus "kind", \
            "containerReference", "itemReference", "admissible" and its own "diagnostics"; each diagnostic is \
            {"severity", "code", "path", "message"}.

            Exit status: 0 when every file gave at least one admissible reservation, 1 otherwise, 2 for usage \
            errors (a file that cannot be read or is of no known kind is reported and the others still run).
            """
    )

    @Argument(help: ArgumentHelp("Emails (.eml), HTML or JSON-LD files, directories of them; - for standard input.", valueName: "FILE"))
    var files: [String]

    @Flag(help: "Print one JSON object per file, one per line.")
    var json = false

    @Option(
        help: ArgumentHelp(
            "development, production, test, or a path to a policy .yaml file (sandbox and limits).",
            valueName: "NAME|PATH"))
    var policy = "development"

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("name at least one file, directory or -") }
    }

    func run() async throws {
        let policy = try StateOptions.loadPolicy(policy)
        var paths: [String] = []
        var unreadable = false
        for file in files {
            switch Self.expand(file) {
            case .success(let found): paths += found
            case .failure(let failure):
                Terminal.error(failure.message)
                unreadable = true
            }
        }
        let deadline = Duration.milliseconds(Int(policy.sandbox.documentTimeoutSeconds * 1000))
        var resolution = ReservationResolver.Configuration()
        resolution.maxReservations = policy.limits.maxReservationsPerDocument
        let resolver = ReservationResolver(configuration: resolution)
        let cores = ProcessInfo.processInfo.activeProcessorCount
        // One worker for one document; for many, the gateway's default pool, kept busy.
        let workers = paths.count == 1 ? 1 : 2 * cores
        var allAdmissible = true
        try await withExtractor(policy: policy, workerCount: workers) { extractor in
            // In flight: enough that no worker waits; printed in the order given as each one's turn comes.
            try await withThrowingTaskGroup(of: (Int, Extracted?).self) { group in
                var results: [Int: Extracted?] = [:]
                var next = 0
                var printed = 0
                func submit() {
                    let index = next
                    let path = paths[index]
                    next += 1
                    group.addTask {
                        let bytes: [UInt8]
                        do throws(CommandFailure) {
                            bytes = try Terminal.read(path)
                        } catch {
                            Terminal.error(error.message)
                            return (index, nil)
                        }
                        guard let kind = Self.documentKind(of: bytes) else {
                            Terminal.error(
                                "\(path) is neither a message (header fields first), nor HTML (starting with <), nor JSON-LD")
                            return (index, nil)
                        }
                        let result = await extractor.extract(bytes, kind: kind, deadline: deadline)
                        return (index, Extracted(path: path, kind: kind, result: result, resolver: resolver))
                    }
                }
                while next < min(paths.count, 2 * workers) { submit() }
                while let (index, extracted) = try await group.next() {
                    results[index] = .some(extracted)
                    if next < paths.count { submit() }
                    while let ready = results.removeValue(forKey: printed) {
                        printed += 1
                        guard let extracted = ready else {
                            unreadable = true
                            continue
                        }
                        if json {
                            try Terminal.json(extracted.output)
                        } else {
                            printTable(extracted)
                        }
                        allAdmissible = allAdmissible && extracted.resolutions.contains(where: \.admissible)
                    }
                }
            }
        }
        if !json && paths.count > 1 {
            Terminal.line("\(paths.count) files")
        }
        if unreadable { throw ExitCode(2) }
        if !allAdmissible || paths.isEmpty { throw ExitCode(1) }
    }

    /// One file's extraction, resolved.
    struct Extracted: Sendable {
        var path: String
        var kind: DocumentKind
        var resolutions: [Resolution]
        var diagnostics: [Diagnostic]

        init(path: String, kind: DocumentKind, result: Result<MarkupGraph, SandboxFailure>, resolver: ReservationResolver) {
            self.path = path
            self.kind = kind
            let graph: MarkupGraph
            switch result {
            case .success(let found):
                graph = found
                diagnostics = found.diagnostics
            case .failure(let failure):
                // No graph for this document: the failure is its one diagnostic, and nothing is admissible.
                graph = MarkupGraph()
                diagnostics = [Diagnostic(.error, Diagnostic.Code(failure.code.description), failure.reason)]
            }
            let document = resolver.resolveDocument(graph)
            diagnostics += document.diagnostics
            resolutions = document.resolutions
        }

        var output: Output {
            Output(file: path, kind: kind.description, reservations: resolutions.map(\.jsonObject), diagnostics: diagnostics)
        }
    }

    /// The `--json` document of one file.
    struct Output: Encodable {
        var file: String
        var kind: String
        var reservations: [JSONValue]
        /// Diagnostics of the document as a whole (extraction, the sandbox, limits reached);
        /// each reservation carries its own. `Diagnostic` encodes as `{severity, code, path, message}`.
        var diagnostics: [Diagnostic]
    }

    /// The files `argument` stands for: itself (or `-`), or the documents under a directory (regular files named
    /// `.eml`, `.html`, `.htm`, `.jsonld`), recursively, hidden ones left out, sorted by path.
    static let documentExtensions: Set<String> = ["eml", "html", "htm", "jsonld"]

    static func expand(_ argument: String) -> Result<[String], CommandFailure> {
        guard argument != "-" else { return .success(["-"]) }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: argument, isDirectory: &isDirectory) else {
            return .failure(CommandFailure(message: "cannot read \(argument): no such file or directory", status: 2))
        }
        guard isDirectory.boolValue else { return .success([argument]) }
        guard let enumerator = FileManager.default.enumerator(
            at: URL(fileURLWithPath: argument), includingPropertiesForKeys: [.isRegularFileKey], options: [.skipsHiddenFiles])
        else { return .failure(CommandFailure(message: "cannot read the directory \(argument)", status: 2)) }
        var found: [String] = []
        for case let url as URL in enumerator
        where documentExtensions.contains(url.pathExtension.lowercased())
            && (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true
        {
            found.append(url.path)
        }
        return .success(found.sorted())
    }

    private func printTable(_ extracted: Extracted) {
        let resolutions = extracted.resolutions
        let admissible = resolutions.count { $0.admissible }
        let noun = resolutions.count == 1 ? "reservation" : "reservations"
        Terminal.line("\(extracted.path) (\(extracted.kind)): \(resolutions.count) \(noun), \(admissible) admissible")
        if !resolutions.isEmpty {
            let width = max(1, String(resolutions.count).count)
            Terminal.line(
                "  " + "#".padding(toLength: width, withPad: " ", startingAt: 0) + "  ADMISSIBLE  RESERVATION")
            for (index, resolution) in resolutions.enumerated() {
                let number = String(index + 1)
                let row = String(repeating: " ", count: width - number.count) + number
                let verdict = (resolution.admissible ? "yes" : "no").padding(toLength: 10, withPad: " ", startingAt: 0)
                Terminal.line("  \(row)  \(verdict)  \(resolution.summary)")
                let indent = String(repeating: " ", count: width + 16)
                for diagnostic in resolution.diagnostics.sorted(by: { $0.severity > $1.severity }) {
                    Terminal.line(indent + diagnostic.description)
                }
            }
        }
        if !extracted.diagnostics.isEmpty {
            Terminal.line("document:")
            for diagnostic in extracted.diagnostics { Terminal.line("  \(diagnostic)") }
        }
    }
}

extension ExtractCommand {
    /// What a file is, told from its first bytes, as `extract` reads it:
    ///
    /// 1. A UTF-16 byte order mark, or `<` as the first byte after an optional UTF-8 byte order mark
    ///    and white space: HTML. An HTML document starts with a doctype, a comment or a tag (HTML
    ///    §13.1). RFC 5322 would allow `<` in a field name, but no sender writes one, and checked
    ///    first this keeps an XML-style first tag (`<o:p>`) from passing for a header field.
    /// 2. `{` or `[` there: a JSON-LD document (RFC 8259 text, JSON-LD 1.1 §9.1).
    /// 3. Header fields before the first empty line, after an optional mbox `From ` separator: a
    ///    message (RFC 5322 §2.1, §3.6.8: a name of printable ASCII other than `:`, then `:`; a
    ///    line starting with white space continues the field above, §2.2.3). The header section is
    ///    checked up to its end or its first 64 KiB, so a text that merely starts with `Note: …`
    ///    and goes on with ordinary lines is not taken for a message.
    ///
    /// Anything else is not readable here (nil).
    static func documentKind(of bytes: [UInt8]) -> DocumentKind? {
        if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) { return .html }
        let start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        let isWhite = { (byte: UInt8) in byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0C }
        if let first = bytes[start...].first(where: { !isWhite($0) }) {
            if first == UInt8(ascii: "<") { return .html }
            if first == UInt8(ascii: "{") || first == UInt8(ascii: "[") { return .jsonLD }
        }
        return isHeaderSection(bytes[start...]) ? .email : nil
    }

    /// Whether `bytes` start with an RFC 5322 header section (see `documentKind(of:)`).
    private static func isHeaderSection(_ bytes: ArraySlice<UInt8>) -> Bool {
        let limit = min(bytes.endIndex, bytes.startIndex + 64 * 1024)
        var lineStart = bytes.startIndex
        var fields = 0
        var isFirstLine = true
        while lineStart < limit {
            var lineEnd = lineStart
            while lineEnd < limit, bytes[lineEnd] != 0x0A { lineEnd += 1 }
            var line = bytes[lineStart..<lineEnd]
            if line.last == 0x0D { line = line.dropLast() }
            defer {
                lineStart = lineEnd + 1
                isFirstLine = false
            }
            if isFirstLine, line.starts(with: Array("From ".utf8)) { continue }  // mbox separator
            if line.isEmpty { return fields > 0 }  // the end of the header section
            if line.first == 0x20 || line.first == 0x09 {
                if fields == 0 { return false }  // a continuation needs a field above it
                continue
            }
            // White space before the colon is the obsolete syntax (RFC 5322 §4.5.3), still read.
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")),
                case let name = line[..<colon].reversed().drop(while: { $0 == 0x20 || $0 == 0x09 }),
                !name.isEmpty, name.allSatisfy({ $0 >= 33 && $0 <= 126 })
            else {
                // The last, cut line of a long header section cannot be judged.
                return lineEnd >= limit && limit < bytes.endIndex && fields > 0
            }
            fields += 1
        }
        return fields > 0
    }
}
