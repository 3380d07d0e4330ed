import ArgumentParser
import Foundation
import GatewayServer
import Store

struct TokensCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tokens",
        abstract: "Issue, list and revoke the bearer tokens `gateway serve` accepts.",
        discussion: """
            admin: domains, flags, tokens, everyone's data. sender DOMAIN: submissions and checks for a registered \
            domain and its subdomains. owner ADDRESS: that owner's reservations and calendar feed. \
            Only a hash of each token is stored: a secret is shown once, when it is issued.
            """,
        subcommands: [Issue.self, List.self, Revoke.self]
    )

    struct Issue: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Issue a token and print its secret, once.")
        @Argument(help: "admin, sender or owner.") var role: String
        @Argument(help: "The registered domain (sender) or the address (owner); none for admin.") var subject: String?
        @Option(help: "What the token is for, for people reading the list.") var label = ""
        @Flag(help: "Print JSON.") var json = false
        @OptionGroup var state: StateOptions

        func validate() throws {
            guard AccessToken.Role(rawValue: role) != nil else { throw ValidationError("the role is admin, sender or owner") }
            if role == "sender" && subject == nil { throw ValidationError("a sender token needs its registered domain") }
            if role == "owner" && subject == nil { throw ValidationError("an owner token needs the owner's address") }
        }

        func run() async throws {
            let role = AccessToken.Role(rawValue: role)!
            do {
                let (subject, issued) = try await state.withStore { store in
                    let authority = TokenAuthority(store: store)
                    let subject = try await authority.subject(for: role, self.subject ?? "")
                    return (subject, try await authority.issue(role: role, subject: subject, label: label, by: currentActor))
                }
                if json {
                    struct Issued: Encodable { var token: AccessToken; var secret: String }
                    return try Terminal.json(Issued(token: issued.token, secret: issued.secret))
                }
                Terminal.line("token #\(issued.token.id) (\(role.rawValue)\(subject.isEmpty ? "" : " \(subject)")), shown this once:")
                Terminal.line(issued.secret)
            } catch let error as TokenError {
                throw CommandFailure(message: error.description)
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List tokens (never their secrets).")
        @Option(help: "Only admin, sender or owner tokens.") var role: String?
        @Flag(help: "Print JSON.") var json = false
        @OptionGroup var state: StateOptions

        func run() async throws {
            var filter: AccessToken.Role?
            if let role {
                guard let parsed = AccessToken.Role(rawValue: role) else { throw ValidationError("--role is admin, sender or owner") }
                filter = parsed
            }
            let tokens = try await state.withStore { try await $0.tokens(role: filter) }
            if json { return try Terminal.json(tokens) }
            for token in tokens {
                // An admin token has no subject: nothing is printed for it, not an empty field.
                var line = "#\(token.id) \(token.role.rawValue)"
                if !token.subject.isEmpty {
                    line = "#\(token.id) \(token.role.rawValue.padding(toLength: 6, withPad: " ", startingAt: 0)) \(token.subject)"
                }
                if !token.label.isEmpty { line += " · \(token.label)" }
                line += " · issued \(token.createdAt.formatted(.iso8601)) by \(token.createdBy)"
                if let revoked = token.revokedAt { line += " · revoked \(revoked.formatted(.iso8601))" }
                Terminal.line(line)
            }
            if tokens.isEmpty { Terminal.line("no tokens; gateway serve makes the first admin token") }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a token: it is refused from now on.")
        @Argument(help: "The token's number (from tokens list).") var id: Int64
        @OptionGroup var state: StateOptions

        func run() async throws {
            guard try await state.withStore({ try await $0.revokeToken(id: id) }) else {
                throw CommandFailure(message: "no unrevoked token #\(id)")
            }
            Terminal.line("token #\(id) revoked")
        }
    }
}
