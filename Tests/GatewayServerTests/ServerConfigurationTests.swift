import EventLoopSupport
import Foundation
import GatewayServer
import Store
import Testing

@Suite("Server configuration")
struct ServerConfigurationTests {
    @Test func aFileSetsListenersTLSAndLimits() throws {
        let configuration = try ServerConfiguration.parse(
            yaml: """
                http: 0.0.0.0:9443
                lmtp: "[::1]:24"
                tls:
                  certificate: certs/site.pem
                  key: certs/site.key
                max-concurrent-ingestions: 8
                max-queued-ingestions: 0
                lmtp-reply-deadline-seconds: 2.5
                lmtp-refuse-rejected: true
                """)
        #expect(configuration.http == .init(host: "0.0.0.0", port: 9443))
        #expect(configuration.lmtp == .init(host: "::1", port: 24))
        #expect(configuration.lmtp?.description == "[::1]:24")
        #expect(configuration.tls == .init(certificateChainPath: "certs/site.pem", privateKeyPath: "certs/site.key"))
        #expect(configuration.maxConcurrentIngestions == 8 && configuration.maxQueuedIngestions == 0)
        #expect(configuration.lmtpReplyDeadlineSeconds == 2.5 && configuration.lmtpRefuseRejected)
        #expect(try ServerConfiguration.parse(yaml: "lmtp: off").lmtp == nil)
        #expect(try ServerConfiguration.parse(yaml: "") == ServerConfiguration())
    }

    @Test(arguments: [
        "htpp: 127.0.0.1:80",  // a typo never silently keeps the default
        "http: 127.0.0.1",
        "http: 127.0.0.1:70000",
        "max-concurrent-ingestions: 0",
        "max-concurrent-ingestions: many",
        "tls:\n  certificate: a.pem",
        "lmtp-refuse-rejected: sometimes",
        "- a list",
        "store: mysql://root@db/gateway",  // issue 19: an unknown scheme never becomes a folder named after it
        "store: postgres:gateway",
    ])
    func aBadFileIsRefusedWithTheKeyNamed(_ yaml: String) {
        #expect(throws: ServerConfigurationError.self) { try ServerConfiguration.parse(yaml: yaml) }
    }

    @Test func theStoreKeyIsParsedOnce() throws {
        #expect(try ServerConfiguration.parse(yaml: "store: /srv/g.sqlite").store == .sqlite(path: "/srv/g.sqlite"))
        let configuration = try ServerConfiguration.parse(yaml: "store: postgres://gw@db.example:5433/gateway?sslmode=require")
        #expect(configuration.store?.description == "postgres://gw@db.example:5433/gateway?sslmode=require")
        #expect(try ServerConfiguration.parse(yaml: "").store == nil)
    }

    @Test func webhookPriorityIsIdleOrANiceValue() throws {
        #expect(try ServerConfiguration.parse(yaml: "").webhookPriority == .idle)
        #expect(try ServerConfiguration.parse(yaml: "webhook-priority: idle").webhookPriority == .idle)
        #expect(try ServerConfiguration.parse(yaml: "webhook-priority: 12").webhookPriority == .nice(12))
        #expect(try ServerConfiguration.parse(yaml: "webhook-priority: 0").webhookPriority == .nice(0))
        for wrong in ["20", "-1", "high", "nice 5"] {
            #expect(throws: ServerConfigurationError.self) {
                try ServerConfiguration.parse(yaml: "webhook-priority: \(wrong)")
            }
        }
    }

    @Test func webhookBusyShareIsAShareOfOneCore() throws {
        #expect(try ServerConfiguration.parse(yaml: "").webhookBusyShare == 0.1)
        #expect(try ServerConfiguration.parse(yaml: "webhook-busy-share: 0.25").webhookBusyShare == 0.25)
        #expect(try ServerConfiguration.parse(yaml: "webhook-busy-share: 1").webhookBusyShare == 1)
        for wrong in ["0", "1.5", "-0.1", "half"] {
            #expect(throws: ServerConfigurationError.self) {
                try ServerConfiguration.parse(yaml: "webhook-busy-share: \(wrong)")
            }
        }
    }

    @Test func listenersParse() throws {
        #expect(try ServerConfiguration.Listener(parsing: ":8080") == .init(host: "127.0.0.1", port: 8080))
        #expect(try ServerConfiguration.Listener(parsing: "localhost:0") == .init(host: "localhost", port: 0))
        #expect(throws: ServerConfigurationError.self) { try ServerConfiguration.Listener(parsing: "[::1]8080") }
    }

    @Test("LMTP may listen on a Unix socket (unix:PATH); the HTTP API may not; the path must fit sun_path")
    func unixSocketListeners() throws {
        let lmtp = try ServerConfiguration.parse(yaml: "lmtp: unix:/run/gateway/lmtp.sock").lmtp
        #expect(lmtp == .init(socketPath: "/run/gateway/lmtp.sock"))
        #expect(lmtp?.description == "unix:/run/gateway/lmtp.sock")
        #expect(try ServerConfiguration.Listener(parsing: "unix:lmtp.sock", allowsSocket: true).socketPath == "lmtp.sock")
        #expect(throws: ServerConfigurationError.self) { try ServerConfiguration.parse(yaml: "http: unix:/run/g.sock") }
        #expect(throws: ServerConfigurationError.self) {
            try ServerConfiguration.Listener(parsing: "unix:/run/g.sock", allowsSocket: false)
        }
        #expect(throws: ServerConfigurationError.self) {
            try ServerConfiguration.Listener(parsing: "unix:", allowsSocket: true)
        }
        let longest = "/" + String(repeating: "s", count: ServerConfiguration.Listener.maxSocketPathBytes - 1)
        #expect(try ServerConfiguration.Listener(parsing: "unix:\(longest)", allowsSocket: true).socketPath == longest)
        #expect(throws: ServerConfigurationError.self) {
            try ServerConfiguration.Listener(parsing: "unix:\(longest)s", allowsSocket: true)
        }
        #expect(try ServerConfiguration.parse(yaml: "lmtp-socket-group: postfix").lmtpSocketGroup == "postfix")
        #expect(try ServerConfiguration.parse(yaml: "lmtp: off").lmtpSocketGroup == nil)
        #expect(throws: ServerConfigurationError.self) { try ServerConfiguration.parse(yaml: "lmtp-socket-group: ''") }
        // HOST:PORT still parses as before through the same entry point.
        #expect(try ServerConfiguration.Listener(parsing: ":2424", allowsSocket: true) == .init(host: "127.0.0.1", port: 2424))
    }
}

@Suite("The example configuration")
struct ExampleConfigurationTests {
    @Test func examplesServeYamlParses() throws {
        let path = ServerFixture.repository.appendingPathComponent("examples/serve.yaml").path
        let configuration = try ServerConfiguration.load(path: path)
        #expect(configuration.http == .init(host: "127.0.0.1", port: 8080))
        #expect(configuration.maxQueuedIngestions == 512)
        // The example lists every setting with its default (the store's default, written out).
        var defaults = ServerConfiguration()
        defaults.store = .sqlite(path: "var/gateway.sqlite")
        #expect(configuration == defaults)
        #expect(configuration.requestHeaderTimeoutSeconds == 5)
        #expect(configuration.maxConnectionsPerClient == 64)
        #expect(configuration.store == .sqlite(path: "var/gateway.sqlite"))
    }
}
