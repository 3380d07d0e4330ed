/// What the gateway tells a worker before it confines itself: how, and how large a request may be.
/// Sent as JSON in the first frame, so the worker's command line stays empty.
struct WorkerSetup: Codable, Sendable, Hashable {
    var confinement: Confinement.Configuration
    /// The largest document a request may carry; a longer request frame is a protocol error.
    var maxDocumentBytes: Int
    /// The size of the document window the worker finds on fd 3 (`DocumentWindow`), or 0 when it has none and every
    /// document comes through the request pipe.
    var documentWindowBytes = 0

    /// Longest setup frame a worker accepts.
    static let maxFrameBytes = 64 << 10
}
