// A worker for the sandbox tests ONLY: the same WorkerMain and Confinement as gateway-worker, with
// a handler that misbehaves on command, to prove what the confinement refuses and how the pool
// copes. Never shipped, never started by the gateway.
//
// The document is the command: "echo", "open", "socket", "fork", "spawn", "execve", "thread", "loop",
// "spin:<ms>", "allocate", "allocate-once:<bytes>", "deep-answer:<levels>", "bad-graph", "wrong-id",
// "garbage", "crash", "recurse", "big-answer:<bytes>", "digest", "window", "write-window", "map-window".

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

/// Writes a graph frame by hand (the layout in Sandbox's Frame+Payloads.swift), bypassing WorkerMain.
/// Writes a graph frame (GraphWire's binary form) by hand, as a compromised worker could.
func writeGraphFrame(id: UInt64, payload: [UInt8]) {
    let length = UInt32(8 + payload.count)
    var frame: [UInt8] = [
        UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), 0x20,
    ]
    for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8(truncatingIfNeeded: id >> UInt64(shift))) }
    frame += payload
    _ = frame.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
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
        node.append(.text(String(getpid())), for: "pid")
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
    case "spawn":  // posix_spawn, as a library would start a helper (clone3/clone with CLONE_VFORK)
        var child: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
        let result = posix_spawn(&child, "/bin/true", nil, nil, argv, [nil])
        return result == 0 ? report("probe.spawned") : report("probe.errno-\(result)", "posix_spawn")
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
    case "allocate":  // 16 MiB blocks until the address space limit (RLIMIT_AS counts them untouched)
        var blocks: [[UInt8]] = []
        while true {
            blocks.append([UInt8](unsafeUninitializedCapacity: 16 << 20) { buffer, count in
                buffer[0] = UInt8(truncatingIfNeeded: blocks.count)
                count = 1
            })
        }
    case "allocate-once":  // one allocation larger than the address space limit
        let block = [UInt8](repeating: 1, count: argument)
        return report("probe.allocated-\(block.count)")
    case "deep-answer":  // a well-formed graph frame nesting `argument` items deep, written by hand
        // version 1, one node; each node: one type "T", no id, json-ld, one property "p" whose one
        // value is the next node; the innermost has no property; no diagnostics.
        var payload: [UInt8] = [1, 1]
        let nodeHead: [UInt8] = [1, 1, UInt8(ascii: "T"), 0, 0]
        for _ in 0..<argument { payload += nodeHead + [1, 1, UInt8(ascii: "p"), 1, 1] }
        payload += nodeHead + [0]
        payload.append(0)
        writeGraphFrame(id: request.id, payload: payload)
        _exit(0)  // the answer is out; leave before WorkerMain writes a second one
    case "bad-graph":  // a well-formed frame whose graph does not decode; then it stays, busy, for the pool to stop
        writeGraphFrame(id: request.id, payload: [1, 5])  // five nodes announced, none follows
        var counter = 0
        while counter >= 0 { counter = (counter &+ 1) & 0xFFFF }
        return report("probe.unreachable")
    case "wrong-id":  // a well-formed answer to another request
        writeGraphFrame(id: request.id &+ 1, payload: [1, 0, 0])  // an empty graph
        _exit(0)
    case "digest":  // the document's length and FNV-1a hash, to prove it arrived intact
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in request.document { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return report("probe.digest-\(request.document.count)-\(String(hash, radix: 16))")
    case "window":  // the size of the document window this worker mapped (0: none)
        return report("probe.window-\(WorkerMain.documentWindow?.count ?? 0)")
    case "write-window":  // writes into the document window, which the worker may only read
        guard let window = WorkerMain.documentWindow, let base = window.baseAddress else {
            return report("probe.no-window")
        }
        UnsafeMutableRawPointer(mutating: base).storeBytes(of: 0x58, as: UInt8.self)
        return report("probe.window-written")
    case "map-window":  // maps the window's file (fd 3) writable again: closed at confinement, and sealed anyway
        let mapped = mmap(nil, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, 3, 0)
        return mapped != UnsafeMutableRawPointer(bitPattern: -1) ? report("probe.window-mapped") : refused("mmap")
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
