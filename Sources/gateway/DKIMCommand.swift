import ArgumentParser
import DKIM
import Foundation
import MailMessage

struct DKIMCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dkim",
        abstract: "Verify, sign and make keys for DKIM signatures (RFC 6376, RFC 8463).",
        subcommands: [Verify.self, Sign.self, Keygen.self]
    )
}

extension DKIMCommand {
    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Verify every DKIM signature of each message.",
            discussion: """
                Prints, per message, one line per signature and an RFC 8601 Authentication-Results header.

                Exit status: 0 when every message passes, 1 when any does not, 2 for usage errors.
                """
        )

        @Argument(help: ArgumentHelp("Messages to verify (.eml files; - for standard input).", valueName: "FILE"))
        var files: [String]

        @OptionGroup var resolver: ResolverOptions

        @Flag(help: "Print one JSON object per message, one per line.")
        var json = false

        @Option(help: ArgumentHelp("Seconds of clock skew tolerated for t= and x=.", valueName: "SECONDS"))
        var clockSkew: Double = 300

        @Option(help: ArgumentHelp("The authserv-id named in Authentication-Results.", valueName: "NAME"))
        var authservId = "gateway"

        func run() async throws {
            var configuration = DKIMVerifier.Configuration()
            configuration.clockSkew = clockSkew
            let verifier = DKIMVerifier(resolver: try resolver.makeResolver(), configuration: configuration)
            var allPass = true
            for file in files {
                let message = try Terminal.readMessage(file)
                let verification = await verifier.verify(message)
                allPass = allPass && verification.result == .pass
                if json {
                    try Terminal.json(VerificationReport(file: file, verification))
                } else {
                    printReport(file: file, verification)
                }
                if let hint = await resolver.keysHint(
                    forMessageAt: file, keyNotFound: verification.signatures.contains { $0.code == .keyNotFound })
                {
                    Terminal.error(hint)
                }
            }
            if !allPass { throw ExitCode(1) }
        }

        private func printReport(file: String, _ verification: DKIMVerification) {
            Terminal.line("\(file): \(verification.result.rawValue)")
            for signature in verification.signatures {
                var line = "  \(signature.result.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0))"
                line += " d=\(signature.signingDomain ?? "?") s=\(signature.selector ?? "?") a=\(signature.algorithm ?? "?")"
                if let bits = signature.keyBits { line += " \(bits)-bit" }
                if let code = signature.code { line += " [\(code)]" }
                Terminal.line(line)
                Terminal.line("            \(signature.reason)")
                if signature.hasUnsignedTail, let signed = signature.signedBodyBytes {
                    Terminal.line("            l= covers \(signed) of \(signature.bodyBytes) body bytes; the rest is unsigned")
                }
            }
            Terminal.line(AuthenticationResults.header(for: verification, authServID: authservId).replacingOccurrences(of: "\r\n", with: "\n"))
        }
    }

    /// `--json` output for one message.
    struct VerificationReport: Encodable {
        struct Signature: Encodable {
            var domain: String?
            var selector: String?
            var algorithm: String?
            var keyBits: Int?
            var result: String
            var code: String?
            var reason: String
            var identity: String?
            var bodyLength: Int?
            var signedBodyBytes: Int?
            var bodyBytes: Int
        }
        var file: String
        var result: String
        var signatures: [Signature]

        init(file: String, _ verification: DKIMVerification) {
            self.file = file
            result = verification.result.rawValue
            signatures = verification.signatures.map {
                Signature(
                    domain: $0.signingDomain, selector: $0.selector, algorithm: $0.algorithm, keyBits: $0.keyBits,
                    result: $0.result.rawValue, code: $0.code?.description, reason: $0.reason, identity: $0.identity,
                    bodyLength: $0.bodyLengthLimit, signedBodyBytes: $0.signedBodyBytes, bodyBytes: $0.bodyBytes)
            }
        }
    }
}

extension DKIMCommand {
    struct Sign: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Sign a message and print it with its DKIM-Signature field on top."
        )

        @Argument(help: ArgumentHelp("The message to sign (- for standard input).", valueName: "FILE"))
        var file: String

        @Option(help: "The signing domain (d=).")
        var domain: String

        @Option(help: "The selector (s=): the key record is at SELECTOR._domainkey.DOMAIN.")
        var selector: String

        @Option(help: ArgumentHelp("The private key (PEM, PKCS#8 or PKCS#1).", valueName: "PEM"))
        var key: String

        @Option(help: ArgumentHelp("rsa or ed25519; must match the key (default: the key's own).", valueName: "ALGORITHM"))
        var algorithm: KeyAlgorithm?

        @Option(help: ArgumentHelp("header/body canonicalization (c=).", valueName: "HEADER/BODY"))
        var canonicalization = "relaxed/relaxed"

        @Option(help: ArgumentHelp("Colon-separated header fields to sign (h=); From is always signed.", valueName: "NAMES"))
        var headers: String?

        @Option(help: ArgumentHelp("Add x= this many seconds after t=.", valueName: "SECONDS"))
        var expiresIn: Int?

        @Flag(help: "Add l= (the body length); text appended later stays outside the signature.")
        var bodyLength = false

        func run() async throws {
            let pem = String(decoding: try Terminal.read(key), as: UTF8.self)
            let privateKey: PrivateKey
            do {
                privateKey = try PrivateKey(pem: pem)
            } catch {
                throw CommandFailure(message: "--key \(key): \(error.reason)", status: 2)
            }
            if let algorithm, algorithm.keyType != privateKey.type {
                throw ValidationError("--algorithm \(algorithm.rawValue) does not match the \(privateKey.type.rawValue) key in \(key)")
            }
            let parts = canonicalization.split(separator: "/").map(String.init)
            guard (1...2).contains(parts.count),
                let header = DKIMSignature.Canonicalization(rawValue: parts[0]),
                let body = DKIMSignature.Canonicalization(rawValue: parts.count == 2 ? parts[1] : "simple")
            else {
                throw ValidationError("--canonicalization must be simple or relaxed for header/body, such as relaxed/relaxed")
            }
            var configuration = DKIMSigner.Configuration(signingDomain: domain.lowercased(), selector: selector)
            configuration.headerCanonicalization = header
            configuration.bodyCanonicalization = body
            configuration.headers = headers.map { $0.split(separator: ":").map { $0.trimmingCharacters(in: .whitespaces).lowercased() } }
            configuration.expiresAfter = expiresIn.map(TimeInterval.init)
            configuration.includeBodyLength = bodyLength
            let message = try Terminal.readMessage(file)
            let signed: [UInt8]
            do {
                signed = try DKIMSigner(key: privateKey, configuration: configuration).sign(message)
            } catch {
                throw CommandFailure(message: "\(file): \(error)")
            }
            FileHandle.standardOutput.write(Data(signed))
        }
    }

    enum KeyAlgorithm: String, ExpressibleByArgument, CaseIterable {
        case rsa
        case ed25519
        var keyType: KeyRecord.KeyType { self == .rsa ? .rsa : .ed25519 }
    }

    struct Keygen: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a signing key, write it as PEM, and print the TXT record to publish."
        )

        @Option(help: "The signing domain the record is for.")
        var domain: String

        @Option(help: "The selector: the record goes at SELECTOR._domainkey.DOMAIN.")
        var selector: String

        @Option(help: "rsa or ed25519.")
        var algorithm: KeyAlgorithm = .rsa

        @Option(help: "RSA modulus size in bits (1024 to 4096; 2048 recommended).")
        var bits = 2048

        @Option(help: ArgumentHelp("Where to write the private key.", valueName: "PATH"))
        var out: String?

        func validate() throws {
            if algorithm == .rsa && !(1024...4096).contains(bits) {
                throw ValidationError("--bits must be between 1024 and 4096 (RFC 8301 refuses keys under 1024 bits)")
            }
        }

        func run() async throws {
            let path = out ?? "\(selector).\(domain).pem"
            guard !FileManager.default.fileExists(atPath: path) else {
                throw CommandFailure(message: "\(path) exists; choose another --out or remove it", status: 2)
            }
            let pem: String
            let publicKey: [UInt8]
            do {
                let key = try PrivateKey.generate(type: algorithm.keyType, bits: bits)
                pem = try key.pem()
                publicKey = try key.publicKeyRecordData()
            } catch {
                throw CommandFailure(message: error.description)
            }
            guard FileManager.default.createFile(atPath: path, contents: Data(pem.utf8), attributes: [.posixPermissions: 0o600]) else {
                throw CommandFailure(message: "cannot write \(path)")
            }
            do {
                let record = "v=DKIM1; k=\(algorithm.rawValue); p=\(Data(publicKey).base64EncodedString())"
                // TXT character-strings hold at most 255 bytes each (RFC 1035 §3.3.14).
                var strings: [String] = []
                var rest = Substring(record)
                while !rest.isEmpty {
                    strings.append("\"\(rest.prefix(250))\"")
                    rest = rest.dropFirst(250)
                }
                Terminal.error("wrote the private key to \(path) (keep it secret); publish this record:")
                Terminal.line("\(selector)._domainkey.\(domain.lowercased()). IN TXT \(strings.joined(separator: " "))")
            }
        }
    }
}
