// gateway-worker: the sandboxed extraction worker the gateway starts and supervises. It reads
// hostile documents from its stdin only after confining itself (see Sandbox/Confinement.swift).
//
// Interim handler: the extraction entry points (Markup, MailMessage) are merged in next.

internal import Glibc
internal import Markup
internal import Sandbox

exit(
    WorkerMain.run { request in
        MarkupGraph(diagnostics: [
            Diagnostic(.error, Diagnostic.Code("sandbox.extractor-missing"), "extraction is not wired in yet")
        ])
    })
