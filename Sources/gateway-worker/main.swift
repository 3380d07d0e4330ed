// gateway-worker: the sandboxed extraction worker the gateway starts and supervises (Sandbox's
// WorkerPool). It reads its setup from stdin, loads what extraction needs, confines itself for good
// (Sandbox/Confinement.swift), and only then reads documents: hostile bytes in, a MarkupGraph out.
// It links no server, network or database code, and starts no thread.

internal import Glibc
internal import Sandbox

let extraction = DocumentExtraction()
exit(WorkerMain.run(prepare: extraction.prepare, handler: extraction.extract))
