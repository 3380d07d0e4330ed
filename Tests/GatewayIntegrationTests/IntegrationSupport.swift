import Foundation

/// Paths and processes the integration tests share.
enum Integration {
    /// The package root, from this file's path.
    static let packageRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }  // Tests/GatewayIntegrationTests/IntegrationSupport.swift
        return url
    }()

    static let scripts = packageRoot.appendingPathComponent("Tests/GatewayIntegrationTests/Scripts")

    /// Debian's python, which sees python3-dkim, python3-extruct and python3-icalendar.
    static let python = "/usr/bin/python3"

    struct ProcessResult {
        var status: Int32
        var output: [UInt8]
        var error: String
        var text: String { String(decoding: output, as: UTF8.self) }
    }

    /// Runs a program to completion with `input` on its standard input. The waiting happens on a
    /// thread of its own: blocking one of the cooperative pool's threads (two on a 2-core machine)
    /// would stall every other test's tasks.
    static func run(_ executable: String, _ arguments: [String], input: [UInt8] = [], environment: [String: String]? = nil) async throws -> ProcessResult {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { try runBlocking(executable, arguments, input: input, environment: environment) })
            }.start()
        }
    }

    private static func runBlocking(_ executable: String, _ arguments: [String], input: [UInt8], environment: [String: String]?) throws -> ProcessResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let stdin = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        // Write and read on separate threads so a large input or output cannot deadlock the pipes.
        let writer = Thread {
            stdin.fileHandleForWriting.write(Data(input))
            try? stdin.fileHandleForWriting.close()
        }
        writer.start()
        let errorData = LockedData()
        let errorReader = Thread { errorData.set(stderr.fileHandleForReading.readDataToEndOfFile()) }
        errorReader.start()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while !errorData.isSet { usleep(1000) }
        return ProcessResult(status: process.terminationStatus, output: [UInt8](output), error: String(decoding: errorData.get(), as: UTF8.self))
    }

    /// A temporary directory removed by the caller (`defer { cleanup() }`).
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("gateway-it-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

final class LockedData: @unchecked Sendable {
    // Sendable: every access goes through `lock`.
    private let lock = NSLock()
    private var data: Data?
    func set(_ value: Data) { lock.lock(); data = value; lock.unlock() }
    func get() -> Data { lock.lock(); defer { lock.unlock() }; return data ?? Data() }
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return data != nil }
}
