import ArgumentParser
import DKIM
import DNS
import Foundation

/// Where DKIM keys come from: a nameserver (the system's by default) or a static key file.
struct ResolverOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Ask this nameserver for key records instead of those in /etc/resolv.conf.", valueName: "HOST:PORT"))
    var nameserver: String?

    @Option(name: .long, help: ArgumentHelp("Read key records from this zone file instead of DNS (offline use, examples).", valueName: "ZONEFILE"))
    var keys: String?

    @Option(name: .long, help: ArgumentHelp("Seconds to wait for one DNS answer.", valueName: "SECONDS"))
    var dnsTimeout: Double = 2

    func validate() throws {
        if nameserver != nil && keys != nil {
            throw ValidationError("--nameserver and --keys are exclusive: keys come either from DNS or from a file")
        }
        if let nameserver {
            do { _ = try NameserverAddress(parsing: nameserver) } catch { throw ValidationError("--nameserver \(nameserver): \(error.reason)") }
        }
    }

    /// The resolver these options describe, with a TTL-respecting cache in front of DNS.
    func makeResolver() throws(CommandFailure) -> any TXTResolver {
        if let keys {
            do {
                return try ZoneFileResolver(contentsOfFile: keys)
            } catch {
                throw CommandFailure(message: "--keys \(keys): \(error)", status: 2)
            }
        }
        var configuration = DNSClient.Configuration.system()
        if let nameserver {
            do {
                configuration.nameservers = [try NameserverAddress(parsing: nameserver)]
            } catch {
                throw CommandFailure(message: "--nameserver \(nameserver): \(error.reason)", status: 2)
            }
        }
        configuration.timeout = .milliseconds(Int(dnsTimeout * 1000))
        return CachingResolver(upstream: DNSClient(configuration: configuration))
    }

    /// The hint for a message whose DKIM key was not found in DNS: when keys came from DNS and a `keys.zone` beside
    /// the message holds the key its signature names (as examples/keys.zone does for the project's examples), use it.
    /// - Returns: the hint, or nil when there is none to give.
    func keysHint(forMessageAt file: String, keyNotFound: Bool) async -> String? {
        guard keyNotFound, keys == nil, file != "-" else { return nil }
        let directory = (file as NSString).deletingLastPathComponent
        let zone = directory.isEmpty ? "keys.zone" : "\(directory)/keys.zone"
        guard FileManager.default.fileExists(atPath: zone), let resolver = try? ZoneFileResolver(contentsOfFile: zone),
            let message = try? Terminal.readMessage(file)
        else { return nil }
        let verification = await DKIMVerifier(resolver: resolver).verify(message)
        guard verification.signatures.contains(where: { $0.result == .pass }) else { return nil }
        return "hint: the key is not in DNS, but \(zone) beside \(file) holds it: add --keys \(zone)"
    }
}
