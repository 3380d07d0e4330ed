/// What one extraction has found and spent so far: the diagnostics, and the counts checked against the
/// configured limits. Shared by the JSON-LD and Microdata readers of one document.
struct ExtractionState {
    let configuration: MarkupExtractor.Configuration
    private(set) var diagnostics: [Diagnostic] = []
    private(set) var topLevelItems = 0
    private(set) var nodes = 0
    /// Set once a count limit is reached: no further node is admitted, readers stop early.
    private(set) var isFull = false

    init(configuration: MarkupExtractor.Configuration) {
        self.configuration = configuration
    }

    /// Diagnostics of one code past this many are counted, not kept, so hostile input cannot flood
    /// the report; each limit's error is reported once anyway.
    static let maxDiagnosticsPerCode = 50
    private var reportedByCode: [Diagnostic.Code: Int] = [:]
    private var omittedDiagnostics = 0

    mutating func warning(_ code: Diagnostic.Code, path: String, _ message: String) {
        report(Diagnostic(.warning, code, path: path, message))
    }

    mutating func error(_ code: Diagnostic.Code, path: String, _ message: String) {
        report(Diagnostic(.error, code, path: path, message))
    }

    private mutating func report(_ diagnostic: Diagnostic) {
        let reported = reportedByCode[diagnostic.code, default: 0]
        guard reported < Self.maxDiagnosticsPerCode else {
            omittedDiagnostics += 1
            return
        }
        reportedByCode[diagnostic.code] = reported + 1
        diagnostics.append(diagnostic)
    }

    /// The diagnostics, closed by a note of how many were left out, if any.
    func finishedDiagnostics() -> [Diagnostic] {
        guard omittedDiagnostics > 0 else { return diagnostics }
        return diagnostics + [
            Diagnostic(
                .warning, .diagnosticsOmitted, path: "",
                "\(omittedDiagnostics) more diagnostics were left out (at most \(Self.maxDiagnosticsPerCode) per code)")
        ]
    }

    /// Counts a top-level item (and its node); false, with one error reported, once a limit is reached.
    mutating func admitTopLevelItem(path: @autoclosure () -> String) -> Bool {
        guard !isFull else { return false }
        guard topLevelItems < configuration.maxItems else {
            isFull = true
            error(
                .tooManyItems, path: path(),
                "more than \(configuration.maxItems) top-level items; the rest of the document was not read"
            )
            return false
        }
        guard admitNode(path: path()) else { return false }
        topLevelItems += 1
        return true
    }

    /// Counts a node, nested or not; false, with one error reported, once `maxNodes` is reached.
    mutating func admitNode(path: @autoclosure () -> String) -> Bool {
        admitNodes(1, path: path())
    }

    /// Counts `count` nodes at once (the copies of an item that is the value of several Microdata
    /// property names); false, with one error reported, when they do not all fit under `maxNodes`.
    mutating func admitNodes(_ count: Int, path: @autoclosure () -> String) -> Bool {
        guard !isFull else { return false }
        guard count <= configuration.maxNodes - nodes else {
            isFull = true
            error(
                .tooManyItems, path: path(),
                "more than \(configuration.maxNodes) items in all (nested ones included); the rest was not read"
            )
            return false
        }
        nodes += count
        return true
    }
}
