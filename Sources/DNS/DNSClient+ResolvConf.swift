internal import Foundation

extension DNSClient.Configuration {
    /// glibc reads at most three nameservers (`MAXNS`).
    static let maximumResolvConfNameservers = 3

    /// The configuration resolv.conf(5) text describes.
    ///
    /// Reads `nameserver ADDRESS` lines (IPv4 or IPv6, with `%zone`; at most three, as glibc) and
    /// `options timeout:N attempts:N` (capped at 30 s and 5, as glibc). Comments start with `#` or `;`.
    /// Lines that cannot be used are skipped, as glibc skips them. With no usable nameserver the
    /// configuration uses 127.0.0.1:53, as resolv.conf(5) specifies. Other settings keep their defaults.
    package init(resolvConf text: String) {
        self.init()
        var nameservers: [NameserverAddress] = []
        for rawLine in text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            var line = Substring(rawLine)
            if let comment = line.firstIndex(where: { $0 == "#" || $0 == ";" }) { line = line[..<comment] }
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard let keyword = fields.first else { continue }
            switch keyword {
            case "nameserver":
                guard fields.count >= 2, nameservers.count < Self.maximumResolvConfNameservers,
                    let address = try? NameserverAddress(ipAddress: String(fields[1]))
                else { continue }
                nameservers.append(address)
            case "options":
                for option in fields.dropFirst() {
                    if option.hasPrefix("timeout:"), let seconds = Int(option.dropFirst("timeout:".count)) {
                        timeout = .seconds(min(max(seconds, 1), 30))
                    } else if option.hasPrefix("attempts:"), let count = Int(option.dropFirst("attempts:".count)) {
                        attempts = min(max(count, 1), 5)
                    }
                }
            default:
                continue
            }
        }
        self.nameservers = nameservers.isEmpty ? [.localhost] : nameservers
    }

    /// The system's resolver configuration, from `/etc/resolv.conf` (or `path`).
    ///
    /// An unreadable file gives the defaults, nameserver 127.0.0.1:53, as glibc does.
    package static func system(resolvConfPath path: String = "/etc/resolv.conf") -> Self {
        guard let data = FileManager.default.contents(atPath: path) else { return Self() }
        return Self(resolvConf: String(decoding: data, as: UTF8.self))
    }
}
