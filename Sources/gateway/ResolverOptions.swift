import ArgumentParser
import DNS

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
}
