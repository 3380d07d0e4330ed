// gateway-worker: the sandboxed extraction worker the gateway starts and supervises. It reads
// hostile documents from its stdin only after confining itself (see Sandbox/Confinement.swift),
// and runs the one extraction handler (Sandbox/DocumentExtraction.swift) on each.

internal import Glibc
internal import Sandbox

exit(WorkerMain.run(handler: DocumentExtraction.run))
