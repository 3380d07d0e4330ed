import DKIM
import DNS
import Foundation
import MailMessage

// gateway-bench: throughput of the gateway's hot paths on generated corpora, printed beside
// baselines measured in the same run (OpenSSL's own speed), so figures read as ratios.
//
//   gateway-bench [dkim] [extract] [ingest] [serve] [console] [--messages N]
//   (serve's options: ServeBenchmark.swift; console's: ConsoleBenchmark.swift)

let arguments = CommandLine.arguments.dropFirst()
let messageCount = arguments.firstIndex(of: "--messages").flatMap { arguments.index(after: $0) < arguments.endIndex ? Int(arguments[arguments.index(after: $0)]) : nil } ?? 3000
let suites = Set(arguments.filter { !$0.hasPrefix("--") && Double($0) == nil })

if suites.isEmpty || suites.contains("dkim") {
    try await DKIMBenchmark(messageCount: messageCount).run()
}
if suites.isEmpty || suites.contains("extract") { try await ExtractionBenchmark(arguments: Array(arguments)).run() }
if suites.isEmpty || suites.contains("ingest") { try await IngestBenchmark(messageCount: messageCount).run() }
if suites.isEmpty || suites.contains("serve") { try await ServeBenchmark().run() }
if suites.isEmpty || suites.contains("console") { try await ConsoleBenchmark().run() }

/// Writes a line at once (unbuffered), so progress shows when the output goes to a file or a pipe.
func report(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
