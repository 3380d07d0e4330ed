internal import Foundation

/// Where the gateway's store is, parsed once from `--store`, the server configuration's `store` key or
/// `GATEWAY_STORE`:
///
/// - a plain path, or `sqlite:PATH`: an SQLite file (created when missing);
/// - `postgres://user:password@host:port/database?sslmode=...` (or `postgresql://`): a PostgreSQL database, read the
///   way libpq reads a connection URI, with `PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`, `PGDATABASE` and
///   `PGSSLMODE` filling in what the URL leaves out ([libpq §34.1.1, §34.15](https://www.postgresql.org/docs/15/libpq-connect.html)).
///
/// Anything else that looks like a URL (`mysql://`, `http://`, `postgres:` without `//`, `postgress://`) is refused,
/// so that a typo never becomes a folder named after it. ``description`` names the location without its password,
/// for errors and logs.
package enum StoreLocation: Hashable, Sendable, CustomStringConvertible {
    /// An SQLite file.
    case sqlite(path: String)
    /// A PostgreSQL database.
    case postgres(PostgresSettings)

    /// Where the store is when nothing says otherwise, relative to the working directory.
    package static let defaultSQLitePath = "var/gateway.sqlite"

    /// The location `text` names.
    /// - Parameter environment: Where the `PG*` variables are read (the process environment).
    /// - Throws: ``StoreError`` `store.location-invalid`, saying what is wrong and what to write.
    package init(parsing text: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(StoreError) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else {
            throw StoreError(
                code: .locationInvalid,
                reason: "the store location is empty; give a file path, sqlite:PATH or postgres://USER@HOST/DATABASE")
        }
        guard let scheme = Self.scheme(of: trimmed) else {
            self = .sqlite(path: trimmed)
            return
        }
        switch scheme.lowercased() {
        case "sqlite":
            var path = String(trimmed.dropFirst(scheme.count + 1))
            // sqlite:///var/gateway.sqlite is the URL form of an absolute path.
            if path.hasPrefix("//") { path.removeFirst(2) }
            guard !path.isEmpty else {
                throw StoreError(code: .locationInvalid, reason: "sqlite: needs a file path, such as sqlite:var/gateway.sqlite")
            }
            self = .sqlite(path: path)
        case "postgres", "postgresql":
            self = .postgres(try PostgresSettings(uri: trimmed, scheme: scheme, environment: environment))
        default:
            let hint = scheme.lowercased().hasPrefix("postg") || scheme.lowercased() == "psql" || scheme.lowercased() == "pg"
                ? " (did you mean postgres://?)" : ""
            throw StoreError(
                code: .locationInvalid,
                reason:
                    "'\(scheme):' is not a store the gateway knows\(hint); use a file path, sqlite:PATH, or "
                    + "postgres://USER@HOST:PORT/DATABASE")
        }
    }

    /// The location as it may be shown: the file, or the URL without its password.
    package var description: String {
        switch self {
        case .sqlite(let path): path
        case .postgres(let settings): settings.description
        }
    }

    /// The backend's name: `sqlite` or `postgresql`.
    package var backend: String {
        switch self {
        case .sqlite: "sqlite"
        case .postgres: "postgresql"
        }
    }

    /// The URI scheme `text` starts with (RFC 3986 §3.1: a letter, then letters, digits, `+`, `-`, `.`, then `:`),
    /// or nil for a path. A one-letter scheme is read as a path, for `C:`-style names.
    static func scheme(of text: String) -> String? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let candidate = text[..<colon]
        guard candidate.count > 1, let first = candidate.unicodeScalars.first,
            CharacterSet.letters.contains(first), first.isASCII,
            candidate.unicodeScalars.allSatisfy({
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "+-.".unicodeScalars.contains($0))
            })
        else { return nil }
        return String(candidate)
    }
}

/// A PostgreSQL database and how to reach it, with libpq's defaults applied.
package struct PostgresSettings: Hashable, Sendable, CustomStringConvertible {
    /// libpq's `sslmode`.
    package enum SSLMode: String, Hashable, Sendable, CaseIterable {
        /// No TLS.
        case disable
        /// TLS if the server insists (libpq tries without first); the gateway tries TLS first and accepts either.
        case allow
        /// TLS when the server offers it, the certificate not checked (libpq's default).
        case prefer
        /// TLS, the certificate not checked.
        case require
        /// TLS, the certificate checked against the trusted roots (`sslrootcert`), not the host name.
        case verifyCA = "verify-ca"
        /// TLS, the certificate checked and its name matching the host.
        case verifyFull = "verify-full"
    }

    /// Where the server listens.
    package enum Endpoint: Hashable, Sendable {
        case tcp(host: String, port: Int)
        /// A Unix socket: `directory/.s.PGSQL.port`, as libpq names it.
        case socket(directory: String, port: Int)
    }

    package var endpoint: Endpoint
    package var user: String
    /// Never shown: ``description`` leaves it out.
    package var password: String?
    package var database: String
    package var sslMode: SSLMode
    /// A PEM file of trusted root certificates for `verify-ca` and `verify-full` (libpq's `sslrootcert`); the
    /// system's roots when nil.
    package var sslRootCertificate: String?
    /// `connect_timeout`, in seconds.
    package var connectTimeout: Int
    /// `application_name`, shown in `pg_stat_activity`.
    package var applicationName: String

    package init(
        endpoint: Endpoint, user: String, password: String? = nil, database: String, sslMode: SSLMode = .prefer,
        sslRootCertificate: String? = nil, connectTimeout: Int = 10, applicationName: String = "gateway"
    ) {
        self.endpoint = endpoint
        self.user = user
        self.password = password
        self.database = database
        self.sslMode = sslMode
        self.sslRootCertificate = sslRootCertificate
        self.connectTimeout = connectTimeout
        self.applicationName = applicationName
    }

    /// The Unix socket directory libpq uses when no host is given (Debian's build).
    package static let defaultSocketDirectory = "/var/run/postgresql"

    /// Parses `postgresql://[user[:password]@][host][:port][/dbname][?param=value&...]` (libpq §34.1.1.2), every
    /// part percent-decoded; then fills what is missing from the environment as libpq does (§34.15), then libpq's
    /// defaults (a Unix socket in ``defaultSocketDirectory``, port 5432, the operating system's user name, a
    /// database named after the user, `sslmode=prefer`).
    init(uri: String, scheme: String, environment: [String: String]) throws(StoreError) {
        func invalid(_ reason: String) -> StoreError {
            StoreError(code: .locationInvalid, reason: "\(Self.redacted(uri)): \(reason)")
        }
        let afterScheme = uri.dropFirst(scheme.count + 1)
        guard afterScheme.hasPrefix("//") else {
            throw invalid("a PostgreSQL URL starts with \(scheme)://, as in postgres://USER@HOST:PORT/DATABASE")
        }
        var rest = Substring(afterScheme.dropFirst(2))
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        var path: Substring = ""
        if let slash = rest.firstIndex(of: "/") {
            path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
        }
        var authority = rest
        var userInfo: Substring? = nil
        if let at = authority.lastIndex(of: "@") {
            userInfo = authority[..<at]
            authority = authority[authority.index(after: at)...]
        }

        var user: String? = nil
        var password: String? = nil
        if let userInfo {
            if let colon = userInfo.firstIndex(of: ":") {
                user = try Self.decoded(userInfo[..<colon], part: "the user name", uri: uri)
                password = try Self.decoded(userInfo[userInfo.index(after: colon)...], part: "the password", uri: uri)
            } else {
                user = try Self.decoded(userInfo, part: "the user name", uri: uri)
            }
            if user?.isEmpty == true { user = nil }
        }

        var host: String? = nil
        var port: Int? = nil
        if authority.contains(",") {
            throw invalid("several hosts are not supported; name one host (put a load balancer or a virtual IP in front)")
        }
        if !authority.isEmpty {
            var portText: Substring? = nil
            if authority.hasPrefix("[") {
                guard let close = authority.firstIndex(of: "]") else { throw invalid("an IPv6 host needs its closing ]") }
                host = String(authority[authority.index(after: authority.startIndex)..<close])
                let after = authority[authority.index(after: close)...]
                if after.hasPrefix(":") { portText = after.dropFirst() } else if !after.isEmpty {
                    throw invalid("unexpected text after the IPv6 host")
                }
            } else if let colon = authority.lastIndex(of: ":") {
                host = try Self.decoded(authority[..<colon], part: "the host", uri: uri)
                portText = authority[authority.index(after: colon)...]
            } else {
                host = try Self.decoded(authority, part: "the host", uri: uri)
            }
            if host?.isEmpty == true { host = nil }
            if let portText, !portText.isEmpty {
                guard let value = Int(portText), (1...65535).contains(value) else {
                    throw invalid("the port must be a number from 1 to 65535")
                }
                port = value
            }
        }
        var database: String? = path.isEmpty ? nil : try Self.decoded(path, part: "the database name", uri: uri)

        var sslMode: SSLMode? = nil
        var rootCertificate: String? = nil
        var connectTimeout: Int? = nil
        var applicationName: String? = nil
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            guard let equals = pair.firstIndex(of: "=") else {
                throw invalid("the query parameter '\(pair.prefix(40))' needs a value (name=value)")
            }
            let name = try Self.decoded(pair[..<equals], part: "a query parameter", uri: uri)
            let value = try Self.decoded(pair[pair.index(after: equals)...], part: "a query parameter", uri: uri)
            switch name {
            case "host": host = value
            case "port":
                guard let number = Int(value), (1...65535).contains(number) else {
                    throw invalid("port must be a number from 1 to 65535")
                }
                port = number
            case "user": user = value
            case "password": password = value
            case "dbname": database = value
            case "sslmode":
                guard let mode = SSLMode(rawValue: value) else {
                    throw invalid("sslmode must be one of \(SSLMode.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                sslMode = mode
            case "sslrootcert": rootCertificate = value
            case "connect_timeout":
                guard let seconds = Int(value), seconds >= 0 else { throw invalid("connect_timeout must be whole seconds") }
                connectTimeout = seconds
            case "application_name": applicationName = value
            default:
                throw invalid(
                    "unknown parameter '\(name.prefix(40))'; the gateway reads host, port, user, password, dbname, "
                        + "sslmode, sslrootcert, connect_timeout and application_name")
            }
        }

        // What the URL leaves out, from the environment (libpq §34.15), then libpq's defaults.
        func variable(_ name: String) -> String? {
            guard let value = environment[name], !value.isEmpty else { return nil }
            return value
        }
        if host == nil { host = variable("PGHOST") }
        if port == nil, let text = variable("PGPORT") {
            guard let value = Int(text), (1...65535).contains(value) else {
                throw invalid("PGPORT must be a number from 1 to 65535")
            }
            port = value
        }
        if user == nil { user = variable("PGUSER") }
        if password == nil { password = variable("PGPASSWORD") }
        if database == nil { database = variable("PGDATABASE") }
        if sslMode == nil, let text = variable("PGSSLMODE") {
            guard let mode = SSLMode(rawValue: text) else {
                throw invalid("PGSSLMODE must be one of \(SSLMode.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            sslMode = mode
        }
        if rootCertificate == nil { rootCertificate = variable("PGSSLROOTCERT") }
        if connectTimeout == nil, let text = variable("PGCONNECT_TIMEOUT") { connectTimeout = Int(text) }
        if applicationName == nil { applicationName = variable("PGAPPNAME") }

        let resolvedUser = user ?? Self.operatingSystemUser(environment)
        let resolvedPort = port ?? 5432
        let resolvedHost = host ?? Self.defaultSocketDirectory
        // libpq: a host that starts with a slash is a socket directory.
        endpoint =
            resolvedHost.hasPrefix("/")
            ? .socket(directory: resolvedHost, port: resolvedPort) : .tcp(host: resolvedHost, port: resolvedPort)
        self.user = resolvedUser
        self.password = password
        self.database = database ?? resolvedUser
        self.sslMode = sslMode ?? .prefer
        self.sslRootCertificate = rootCertificate
        // libpq: 0 (or absent) waits indefinitely; the gateway bounds it, and a value under 2 counts as 2.
        self.connectTimeout = connectTimeout.map { $0 == 0 ? 10 : max($0, 2) } ?? 10
        self.applicationName = applicationName ?? "gateway"
    }

    /// The user name libpq takes when none is given: the operating system's.
    static func operatingSystemUser(_ environment: [String: String]) -> String {
        if let user = environment["USER"], !user.isEmpty { return user }
        return ProcessInfo.processInfo.userName
    }

    /// `text` percent-decoded (RFC 3986 §2.1), or `store.location-invalid`.
    static func decoded(_ text: Substring, part: String, uri: String) throws(StoreError) -> String {
        guard let value = String(text).removingPercentEncoding else {
            throw StoreError(code: .locationInvalid, reason: "\(redacted(uri)): \(part) is not valid percent-encoding")
        }
        return value
    }

    /// A URL as written, with the password left out (in the user part and in a `password=` parameter), for errors
    /// about a URL that did not parse.
    static func redacted(_ uri: String) -> String {
        var text = uri
        if let schemeEnd = text.range(of: "://") {
            let authorityEnd = text[schemeEnd.upperBound...].firstIndex(where: { $0 == "/" || $0 == "?" }) ?? text.endIndex
            if let at = text[schemeEnd.upperBound..<authorityEnd].lastIndex(of: "@"),
                let colon = text[schemeEnd.upperBound..<at].firstIndex(of: ":")
            {
                text.removeSubrange(colon..<at)
            }
        }
        if let range = text.range(of: #"([?&])password=[^&]*"#, options: .regularExpression) {
            let separator = text[range].first.map(String.init) ?? "?"
            text.replaceSubrange(range, with: separator == "?" ? "?" : "")
            text = text.replacingOccurrences(of: "?&", with: "?")
            if text.hasSuffix("?") { text.removeLast() }
        }
        return text
    }

    /// `postgres://USER@HOST:PORT/DATABASE?sslmode=MODE` (a socket as `?host=DIRECTORY&port=PORT`), without the
    /// password.
    package var description: String {
        func encoded(_ text: String) -> String {
            text.addingPercentEncoding(withAllowedCharacters: .urlUserAllowed.subtracting(CharacterSet(charactersIn: ":@/?#"))) ?? text
        }
        switch endpoint {
        case .tcp(let host, let port):
            let shownHost = host.contains(":") ? "[\(host)]" : host
            return "postgres://\(encoded(user))@\(shownHost):\(port)/\(encoded(database))?sslmode=\(sslMode.rawValue)"
        case .socket(let directory, let port):
            return "postgres://\(encoded(user))@/\(encoded(database))?host=\(directory)&port=\(port)"
        }
    }
}
