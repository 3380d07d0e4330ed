// A worker for the sandbox tests ONLY: the same WorkerMain and Confinement as gateway-worker, with
// a handler that misbehaves on command, to prove what the confinement refuses and how the pool
// copes. Never shipped, never started by the gateway.
//
// The document is the command: "echo", "open", "socket", "fork", "execve", "thread", "loop",
// "spin:<ms>", "allocate", "allocate-once:<bytes>", "garbage", "crash", "recurse", "big-answer:<bytes>".

internal import CSeccomp
internal import Glibc
internal import Markup
internal import Sandbox

/// A graph that reports one fact as a diagnostic code (tests compare codes).
func report(_ code: String, _ detail: String = "") -> MarkupGraph {
    MarkupGraph(diagnostics: [Diagnostic(.warning, Diagnostic.Code(code), detail)])
}

/// The errno of a refused call, as a diagnostic code: "probe.errno-13" for EACCES.
func refused(_ call: String) -> MarkupGraph {
    report("probe.errno-\(errno)", "\(call) was refused")
}

@inline(never)
func recurse(_ depth: Int) -> Int {
    if depth == Int.max { return 0 }  // never: the stack runs out first
    var frame = [Int](repeating: depth, count: 64)  // keeps each frame on the stack busy
    frame[depth % 64] = recurse(depth + 1)
    return frame.reduce(0, &+)
}

func handle(_ request: ExtractionRequest) -> MarkupGraph {
    let command = String(decoding: request.document.prefix(64), as: UTF8.self)
    let argument = Int(command.split(separator: ":").dropFirst().first ?? "") ?? 0
    let name = command.prefix { $0 != ":" && $0 != " " }
    switch name {
    case "echo":
        var node = SchemaNode(types: ["Echo"], syntax: .jsonLD)
        node.append(.text(String(request.document.count)), for: "length")
        node.append(.text(request.kind.description), for: "kind")
        return MarkupGraph(nodes: [node])
    case "open":
        let fd = open("/etc/hostname", O_RDONLY)
        return fd >= 0 ? report("probe.opened") : refused("open")
    case "socket":
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        return fd >= 0 ? report("probe.socket-created") : refused("socket")
    case "fork":
        let child = csandbox_raw_fork()
        if child == 0 { _exit(0) }
        return child > 0 ? report("probe.forked") : refused("fork")
    case "execve":
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
        execve("/bin/true", argv, [nil])
        return refused("execve")
    case "thread":
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { _ in nil }, nil)
        return result == 0 ? report("probe.thread-created") : report("probe.errno-\(result)", "pthread_create")
    case "loop":
        var counter = 0
        while counter >= 0 { counter = (counter &+ 1) & 0xFFFF }
        return report("probe.unreachable")
    case "spin":
        var start = timespec()
        clock_gettime(CLOCK_MONOTONIC, &start)
        var now = start
        repeat {
            clock_gettime(CLOCK_MONOTONIC, &now)
        } while (now.tv_sec - start.tv_sec) * 1000
            + (now.tv_nsec - start.tv_nsec) / 1_000_000 < argument
        return report("probe.spun")
    case "allocate":
        var blocks: [[UInt8]] = []
        while true { blocks.append([UInt8](repeating: UInt8(blocks.count & 0xFF), count: 16 << 20)) }
    case "allocate-once":  // one allocation larger than the address space limit
        let block = [UInt8](repeating: 1, count: argument)
        return report("probe.allocated-\(block.count)")
    case "garbage":
        _ = write(1, "this is not a frame at all", 26)
        return report("probe.garbage-sent")
    case "crash":
        let pointer = UnsafeMutablePointer<Int>(bitPattern: 8)
        pointer?.pointee = 1
        return report("probe.survived-crash")
    case "recurse":
        return report("probe.depth-\(recurse(0))")
    case "big-answer":
        return report("probe.big", String(repeating: "x", count: argument))
    default:
        return report("probe.unknown-command")
    }
}

exit(WorkerMain.run(handler: handle))
