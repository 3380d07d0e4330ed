import Foundation
import Store
import Testing

/// `--store`, the `store` key and `GATEWAY_STORE`, parsed once (libpq's rules for PostgreSQL URLs).
@Suite("Store locations")
struct StoreLocationTests {
    @Test(arguments: [
        ("var/gateway.sqlite", "var/gateway.sqlite"), ("/srv/gateway/store.sqlite", "/srv/gateway/store.sqlite"),
        ("sqlite:var/g.sqlite", "var/g.sqlite"), ("sqlite:///srv/g.sqlite", "/srv/g.sqlite"),
        ("./odd:name.sqlite", "./odd:name.sqlite"), ("C:store", "C:store"),
    ])
    func pathsAndSQLiteURLsNameAFile(text: String, path: String) throws {
        #expect(try StoreLocation(parsing: text, environment: [:]) == .sqlite(path: path))
    }

    @Test func aFullURLGivesEveryPart() throws {
        let location = try StoreLocation(
            parsing: "postgresql://eva:s%40cret@db.example.net:6432/gate%20way?sslmode=verify-full&application_name=mx1",
            environment: ["PGPASSWORD": "ignored", "PGHOST": "ignored"])
        guard case .postgres(let settings) = location else { throw Failure.notPostgres }
        #expect(settings.endpoint == .tcp(host: "db.example.net", port: 6432))
        #expect(settings.user == "eva")
        #expect(settings.password == "s@cret")
        #expect(settings.database == "gate way")
        #expect(settings.sslMode == .verifyFull)
        #expect(settings.applicationName == "mx1")
        #expect(location.description == "postgres://eva@db.example.net:6432/gate%20way?sslmode=verify-full")
    }

    /// libpq §34.15: what the URL leaves out comes from PG* variables, then the defaults.
    @Test func theEnvironmentFillsWhatTheURLLeavesOut() throws {
        let environment = [
            "PGHOST": "10.0.0.5", "PGPORT": "5433", "PGUSER": "gw", "PGPASSWORD": "pw", "PGDATABASE": "gateway",
            "PGSSLMODE": "require",
        ]
        guard case .postgres(let settings) = try StoreLocation(parsing: "postgres://", environment: environment) else {
            throw Failure.notPostgres
        }
        #expect(settings.endpoint == .tcp(host: "10.0.0.5", port: 5433))
        #expect(settings.user == "gw" && settings.password == "pw" && settings.database == "gateway")
        #expect(settings.sslMode == .require)

        guard case .postgres(let defaults) = try StoreLocation(parsing: "postgres:///", environment: ["USER": "ada"])
        else { throw Failure.notPostgres }
        #expect(defaults.endpoint == .socket(directory: "/var/run/postgresql", port: 5432))
        #expect(defaults.user == "ada" && defaults.database == "ada" && defaults.password == nil)
        #expect(defaults.sslMode == .prefer)
    }

    @Test func aSocketDirectoryAsHostIsASocket() throws {
        guard
            case .postgres(let settings) = try StoreLocation(
                parsing: "postgres://gw@/gateway?host=/tmp/pg&port=6000", environment: [:])
        else { throw Failure.notPostgres }
        #expect(settings.endpoint == .socket(directory: "/tmp/pg", port: 6000))
        #expect(settings.description == "postgres://gw@/gateway?host=/tmp/pg&port=6000")
    }

    @Test(arguments: [
        "mysql://root@db/gateway", "http://example.com/store", "postgres:gateway", "postgres:/var/db",
        "postgress://db/gateway", "postgre://db/x", "psql://db/x", "postgres://db/x?sslmode=sometimes",
        "postgres://db:99999/x", "postgres://a,b/x", "postgres://db/x?colour=blue", "sqlite:", "",
    ])
    func whatIsNotAStoreIsRefused(text: String) {
        #expect(throws: StoreError.self) { try StoreLocation(parsing: text, environment: [:]) }
        #expect((try? StoreLocation(parsing: text, environment: [:])) == nil)
    }

    @Test func refusalsNameTheURLWithoutItsPassword() {
        do {
            _ = try StoreLocation(parsing: "postgres://eva:hunter2@db/x?password=hunter3&sslmode=bogus", environment: [:])
            Issue.record("parsed a URL with an unknown sslmode")
        } catch {
            #expect(error.code == .locationInvalid)
            #expect(error.reason.contains("postgres://eva@db/x"))
            #expect(!error.reason.contains("hunter"))
        }
        do {
            _ = try StoreLocation(parsing: "mysql://root:pw@db/x", environment: [:])
        } catch {
            #expect(error.code == .locationInvalid)
            #expect(error.reason.contains("'mysql:'"))
        }
    }

    enum Failure: Error { case notPostgres }
}
