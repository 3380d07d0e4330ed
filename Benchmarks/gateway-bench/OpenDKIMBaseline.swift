import Foundation

/// A C verifier on the same corpus: libopendkim (OpenDKIM 2.11, what `opendkim` runs), keys read
/// from a file (its DKIM_QUERY_FILE test mode: no DNS), one core, CPU time like ours.
///
/// The program is compiled at run time with `cc` against Debian's libopendkim-dev, so the bench needs
/// no C target; without the headers or a compiler the baseline is skipped with a note.
enum OpenDKIMBaseline {
    struct Result {
        var messages: Int
        var passed: Int
        var messagesPerSecond: Double
    }

    /// Why there is no baseline (no headers, no compiler, a failed run).
    struct Unavailable: Error {
        var reason: String
    }

    /// Verifies `corpus` three times with libopendkim and keeps the best pass.
    /// - Parameter keys: `name record` lines, as the key file wants them.
    static func measure(_ corpus: [[UInt8]], keys: [String]) -> Swift.Result<Result, Unavailable> {
        guard FileManager.default.fileExists(atPath: "/usr/include/opendkim/dkim.h") else {
            return .failure(Unavailable(reason: "libopendkim-dev is not installed (make deps installs it)"))
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "gateway-bench-opendkim-\(getpid())")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let source = directory.appendingPathComponent("verify.c")
            let program = directory.appendingPathComponent("verify")
            let corpusFile = directory.appendingPathComponent("corpus.bin")
            let keyFile = directory.appendingPathComponent("keys.txt")
            try Data(cSource.utf8).write(to: source)
            try Data((keys.joined(separator: "\n") + "\n").utf8).write(to: keyFile)
            // Length-prefixed messages (u32, little-endian), read into memory before timing.
            var bytes = [UInt8]()
            for message in corpus {
                withUnsafeBytes(of: UInt32(message.count).littleEndian) { bytes += $0 }
                bytes += message
            }
            try Data(bytes).write(to: corpusFile)
            let (compiled, compileOutput) = run("/usr/bin/cc", ["-O2", "-o", program.path, source.path, "-lopendkim"])
            guard compiled == 0 else {
                return .failure(
                    Unavailable(reason: "cc could not build the libopendkim verifier: \(compileOutput.prefix(300))"))
            }
            let (status, output) = run(program.path, [corpusFile.path, keyFile.path])
            let fields = output.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            guard status == 0, fields.count == 3, let messages = Int(fields[0]), let passed = Int(fields[1]),
                let seconds = Double(fields[2]), seconds > 0
            else { return .failure(Unavailable(reason: "the libopendkim verifier failed: \(output.prefix(300))")) }
            return .success(Result(messages: messages, passed: passed, messagesPerSecond: Double(messages) / seconds))
        } catch {
            return .failure(Unavailable(reason: "could not prepare the libopendkim verifier: \(error)"))
        }
    }

    private static func run(_ executable: String, _ arguments: [String]) -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        do {
            try process.run()
        } catch {
            return (-1, "\(error)")
        }
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    /// Reads the corpus, then verifies every message three times, printing "messages passed best-CPU-seconds".
    static let cSource = #"""
        #include <stdint.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <string.h>
        #include <time.h>
        #include <opendkim/dkim.h>

        static double cpu(void) {
            struct timespec t;
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
            return t.tv_sec + t.tv_nsec / 1e9;
        }

        int main(int argc, char **argv) {
            if (argc != 3) return 2;
            FILE *file = fopen(argv[1], "rb");
            if (file == NULL) return 2;
            fseek(file, 0, SEEK_END);
            long size = ftell(file);
            rewind(file);
            unsigned char *data = malloc(size);
            if (data == NULL || fread(data, 1, size, file) != (size_t) size) return 2;
            fclose(file);

            DKIM_LIB *lib = dkim_init(NULL, NULL);
            if (lib == NULL) return 2;
            dkim_query_t method = DKIM_QUERY_FILE;
            dkim_options(lib, DKIM_OP_SETOPT, DKIM_OPTS_QUERYMETHOD, &method, sizeof method);
            dkim_options(lib, DKIM_OP_SETOPT, DKIM_OPTS_QUERYINFO, argv[2], strlen(argv[2]));

            double best = 1e30;
            long messages = 0, passed = 0;
            for (int pass = 0; pass < 3; pass++) {
                double start = cpu();
                messages = 0;
                passed = 0;
                for (long offset = 0; offset + 4 <= size;) {
                    uint32_t length;
                    memcpy(&length, data + offset, 4);
                    offset += 4;
                    DKIM_STAT status;
                    DKIM *dkim = dkim_verify(lib, (unsigned char *) "bench", NULL, &status);
                    if (dkim != NULL) {
                        status = dkim_chunk(dkim, data + offset, length);
                        if (status == DKIM_STAT_OK) status = dkim_chunk(dkim, NULL, 0);
                        if (status == DKIM_STAT_OK) status = dkim_eom(dkim, NULL);
                        if (status == DKIM_STAT_OK) passed++;
                        dkim_free(dkim);
                    }
                    offset += length;
                    messages++;
                }
                double elapsed = cpu() - start;
                if (elapsed < best) best = elapsed;
            }
            printf("%ld %ld %.6f\n", messages, passed, best);
            dkim_close(lib);
            return 0;
        }
        """#
}
