import DKIM
import DNS
import Foundation
import Glibc
import MailMessage

/// Verification throughput on one core with keys cached, on a corpus like the issue describes:
/// 70% rsa-2048 relaxed/relaxed, 20% ed25519, 10% rsa-1024 simple/simple; multipart HTML bodies of 5–200 KB.
struct DKIMBenchmark {
    var messageCount: Int

    struct Profile {
        var selector: String
        var key: PrivateKey
        var canonicalization: DKIMSignature.Canonicalization
        var share: Double
    }

    func run() async throws {
        report("== DKIM verification (one core, keys cached) ==")
        let started = Date()
        let profiles = [
            Profile(selector: "rsa2048", key: try PrivateKey.generate(type: .rsa, bits: 2048), canonicalization: .relaxed, share: 0.7),
            Profile(selector: "ed25519", key: try PrivateKey.generate(type: .ed25519), canonicalization: .relaxed, share: 0.2),
            Profile(selector: "rsa1024", key: try PrivateKey.generate(type: .rsa, bits: 1024), canonicalization: .simple, share: 0.1),
        ]
        var zone = ""
        var keyLines: [String] = []
        for profile in profiles {
            let data = Data(try profile.key.publicKeyRecordData()).base64EncodedString()
            let kind = profile.key.type == .rsa ? "rsa" : "ed25519"
            zone += "\(profile.selector)._domainkey.bench.example. 3600 IN TXT \"v=DKIM1; k=\(kind); p=\(data)\"\n"
            keyLines.append("\(profile.selector)._domainkey.bench.example v=DKIM1; k=\(kind); p=\(data)")
        }
        let resolver = CachingResolver(upstream: try ZoneFileResolver(zoneText: zone))

        var generator = SplitMix64(seed: 20261121)
        var corpus: [[UInt8]] = []
        var bodyBytes = 0
        for index in 0..<messageCount {
            let roll = Double(generator.next() % 1000) / 1000
            let profile = roll < 0.7 ? profiles[0] : roll < 0.9 ? profiles[1] : profiles[2]
            let size = 5_000 + Int(generator.next() % 195_001)
            let message = try RawMessage(bytes: CorpusGenerator.email(index: index, htmlBytes: size, using: &generator))
            var configuration = DKIMSigner.Configuration(signingDomain: "bench.example", selector: profile.selector)
            configuration.headerCanonicalization = profile.canonicalization
            configuration.bodyCanonicalization = profile.canonicalization
            let signed = try DKIMSigner(key: profile.key, configuration: configuration).sign(message)
            bodyBytes += message.body.count
            corpus.append(signed)
        }
        let averageKB = Double(bodyBytes) / Double(messageCount) / 1000
        report(String(format: "corpus: %d messages, %.1f MB of bodies (mean %.0f KB), generated and signed in %.1f s",
                     messageCount, Double(bodyBytes) / 1e6, averageKB, Date().timeIntervalSince(started)))

        let verifier = DKIMVerifier(resolver: resolver)
        // Warm-up: fills the key cache and the page cache; then three timed passes, best kept.
        for bytes in corpus.prefix(200) { _ = await verifier.verify(try RawMessage(bytes: bytes)) }
        // openssl speed divides by CPU time, so the ratio below uses ours too; wall time is shown beside
        // it because the machine is shared (the load average says how much).
        var bestWall = Double.infinity
        var bestCPU = Double.infinity
        var failures = 0
        for _ in 0..<3 {
            let clock = ContinuousClock()
            let start = clock.now
            let cpu = CPUTime.now()
            failures += try await Self.verifyAll(corpus, with: verifier)
            bestCPU = min(bestCPU, (CPUTime.now() - cpu).process)
            bestWall = min(bestWall, (clock.now - start).seconds)
        }
        guard failures == 0 else { throw BenchFailure("\(failures) verifications did not pass") }
        let rate = Double(messageCount) / bestCPU
        var load = [0.0, 0, 0]
        getloadavg(&load, 3)
        report(String(format: "gateway: %.0f messages/s per CPU second, %.0f MB/s of bodies; wall clock %.0f messages/s (load average %.1f)",
                     rate, Double(bodyBytes) / bestCPU / 1e6, Double(messageCount) / bestWall, load[0]))

        // A C verifier on (part of) the same corpus.
        let subset = Array(corpus.prefix(1000))
        switch OpenDKIMBaseline.measure(subset, keys: keyLines) {
        case .success(let baseline):
            report(String(format: "libopendkim (C, OpenDKIM 2.11): %.0f messages/s per CPU second on the first %d messages (%d of them pass)",
                         baseline.messagesPerSecond, baseline.messages, baseline.passed))
        case .failure(let unavailable):
            report("libopendkim baseline skipped: \(unavailable.reason)")
        }

        // The same run's hardware figures: OpenSSL's speed for the primitives the corpus needs.
        let speed = OpenSSLSpeed.measure()
        guard let sha = speed.sha256BytesPerSecond, let rsa2048 = speed.verifiesPerSecond["rsa2048"],
            let rsa1024 = speed.verifiesPerSecond["rsa1024"], let ed25519 = speed.verifiesPerSecond["ed25519"]
        else {
            report("openssl speed: could not read its output; no hardware bound printed")
            return
        }
        report(String(format: "openssl speed: sha256 %.0f MB/s (16 KB blocks), verify/s rsa2048 %.0f, rsa1024 %.0f, ed25519 %.0f",
                     sha / 1e6, rsa2048, rsa1024, ed25519))
        // Bound: hash every body once and verify one signature per message, nothing else.
        let perMessage = (averageKB * 1000) / sha + 0.7 / rsa2048 + 0.2 / ed25519 + 0.1 / rsa1024
        let bound = 1 / perMessage
        report(String(format: "hardware bound for this corpus: %.0f messages/s; gateway reaches %.0f%% of it", bound, rate / bound * 100))
    }
}

extension DKIMBenchmark {
    /// One timed pass: parse and verify every message as the gateway does.
    /// - Returns: how many messages did not pass.
    @inline(never)
    static func verifyAll(_ corpus: [[UInt8]], with verifier: DKIMVerifier) async throws -> Int {
        var failures = 0
        for bytes in corpus {
            let verification = await verifier.verify(try RawMessage(bytes: bytes))
            if verification.result != .pass { failures += 1 }
        }
        return failures
    }
}

/// Runs `openssl speed` for the primitives DKIM uses and reads its summary lines.
struct OpenSSLSpeed {
    var sha256BytesPerSecond: Double?
    var verifiesPerSecond: [String: Double] = [:]

    static func measure() -> OpenSSLSpeed {
        var result = OpenSSLSpeed()
        let output = run(["speed", "-seconds", "1", "-bytes", "16384", "sha256"])
        // "sha256   123456.78k" — the figure is in thousands of bytes per second.
        for line in output.split(separator: "\n") where line.hasPrefix("sha256") {
            if let last = line.split(separator: " ").last, last.hasSuffix("k"), let value = Double(last.dropLast()) {
                result.sha256BytesPerSecond = value * 1000
            }
        }
        let signatures = run(["speed", "-seconds", "1", "rsa1024", "rsa2048", "ed25519"])
        for line in signatures.split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            if fields.first == "rsa", fields.count >= 7, let bits = fields.dropFirst().first, let verify = Double(fields[6]) {
                result.verifiesPerSecond["rsa" + bits] = verify
            }
            // " 253 bits EdDSA (Ed25519)   0.0000s   0.0001s  30000.0   10000.0"
            if line.contains("Ed25519"), let verify = fields.last.flatMap(Double.init) {
                result.verifiesPerSecond["ed25519"] = verify
            }
        }
        return result
    }

    /// Runs openssl with an empty signal mask and default handlers: `openssl speed` stops each test
    /// with SIGALRM, which a Swift thread may have blocked and a child would inherit blocked.
    private static func run(_ arguments: [String]) -> String {
        var pipe: [Int32] = [0, 0]
        guard Glibc.pipe(&pipe) == 0 else { return "" }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipe[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addclose(&actions, pipe[0])
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGALRM)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = (["openssl"] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/usr/bin/openssl", &actions, &attributes, argv, environ)
        close(pipe[1])
        defer { close(pipe[0]) }
        guard spawned == 0 else { return "" }
        var output = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(pipe[0], &buffer, buffer.count)
            if count <= 0 { break }
            output += buffer[0..<count]
        }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        return String(decoding: output, as: UTF8.self)
    }
}
