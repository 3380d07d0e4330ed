@testable import Admission
import Testing

@Suite("Domain names and the Public Suffix List")
struct DomainNameTests {
    @Test("Names are lower-cased, trailing dots dropped, IDNs turned into A-labels", arguments: [
        ("Booking.Example.COM.", "booking.example.com"),
        ("  mail.example.org ", "mail.example.org"),
        ("Bücher.example", "xn--bcher-kva.example"),
        ("ÉCOLE.fr", "xn--cole-9oa.fr"),
        ("例え.jp", "xn--r8jz45g.jp"),
        ("XN--BCHER-KVA.example", "xn--bcher-kva.example"),  // a valid A-label, in capitals
        ("xn--fuball-cta.de", "xn--fuball-cta.de"),
        ("ab--cd.example", "ab--cd.example"),  // not an A-label: an ASCII label with two hyphens
    ])
    func normalizes(input: String, expected: String) throws {
        #expect(try DomainName(normalizing: input).ascii == expected)
    }

    @Test("IP literals, mixed scripts and invalid names are refused with their codes", arguments: [
        ("192.0.2.10", "registry.ip-literal"),
        ("[2001:db8::1]", "registry.ip-literal"),
        ("2001:db8::1", "registry.ip-literal"),
        ("pаypal.com", "registry.mixed-scripts"),  // Cyrillic а
        ("gοogle.com", "registry.mixed-scripts"),  // Greek ο
        ("", "registry.domain-invalid"),
        ("-bad-.example", "registry.domain-invalid"),
        ("a..b.example", "registry.domain-invalid"),
        ("spaces in.example", "registry.domain-invalid"),
        // The same checks on the Unicode form of a name typed as A-labels.
        ("xn--skywys-6nf.example", "registry.mixed-scripts"),  // skywаys, Cyrillic а
        ("XN--SKYWYS-6NF.example", "registry.mixed-scripts"),
        ("mail.xn--pypal-4ve.com", "registry.mixed-scripts"),  // pаypal
        // A-labels that are not valid Punycode for a valid U-label (RFC 5891 §5.4).
        ("xn--abc.com", "registry.domain-invalid"),
        ("xn--.com", "registry.domain-invalid"),
        ("xn--a.com", "registry.domain-invalid"),
        ("xn--ls8h.la", "registry.domain-invalid"),  // an emoji: not allowed by IDNA2008
        ("xn--bcher-kva.xn--abc", "registry.domain-invalid"),
    ])
    func refuses(input: String, code: String) {
        #expect {
            _ = try DomainName(normalizing: input)
        } throws: { error in
            (error as? AdmissionError)?.code.description == code
        }
    }

    @Test("The Unicode form is shown back")
    func unicodeForm() throws {
        #expect(try DomainName(normalizing: "xn--bcher-kva.example").unicode == "bücher.example")
    }

    @Test("Subdomains are within their parents, not the other way round")
    func within() throws {
        let parent = try DomainName(normalizing: "example.com")
        #expect(try DomainName(normalizing: "mail.example.com").isWithin(parent))
        #expect(parent.isWithin(parent))
        #expect(!(try DomainName(normalizing: "badexample.com").isWithin(parent)))
        #expect(!parent.isWithin(try DomainName(normalizing: "mail.example.com")))
    }

    @Test("Organizational domains from Debian's list", arguments: [
        ("mail.example.com", "example.com"),
        ("a.b.example.co.uk", "example.co.uk"),
        ("user.github.io", "user.github.io"),
        ("www.ck", "www.ck"),  // an exception rule
        ("foo.bar.ck", "foo.bar.ck"),  // *.ck wildcard: bar.ck is a public suffix
        ("shop.xn--r8jz45g.jp", "xn--r8jz45g.jp"),
        ("example.unknowntld", "example.unknowntld"),  // the implicit * rule
    ])
    func organizationalDomain(name: String, expected: String) throws {
        let list = try PublicSuffixList()
        #expect(list.organizationalDomain(of: try DomainName(normalizing: name))?.ascii == expected)
    }

    @Test("Public suffixes have no organizational domain", arguments: ["com", "co.uk", "github.io", "bar.ck"])
    func publicSuffixes(name: String) throws {
        let list = try PublicSuffixList()
        let domain = try DomainName(normalizing: name)
        #expect(list.isPublicSuffix(domain))
        #expect(list.organizationalDomain(of: domain) == nil)
    }
}

@Suite("Policies")
struct PolicyTests {
    static let directory = URLPath.policies

    @Test("The three shipped policies load", arguments: ["development", "production", "test"])
    func shipped(name: String) throws {
        let (policy, _) = try Policy.load(name, searchPaths: [Self.directory])
        #expect(policy.name == name)
    }

    @Test("Production locks the flags and the sandbox; development approves at registration")
    func productionIsStrict() throws {
        let production = try Policy.load("production", searchPaths: [Self.directory]).0
        #expect(production.flags.mayEnable == false)
        #expect(production.sandbox.mayDisable == false)
        #expect(production.registration.approveOnRegister == false)
        let development = try Policy.load("development", searchPaths: [Self.directory]).0
        #expect(development.registration.approveOnRegister)
        #expect(development.flags.mayEnable)
    }

    @Test("A file names only what it changes; the rest keeps its default")
    func partial() throws {
        let policy = try Policy(yaml: "name: mine\ndkim:\n  clockSkewSeconds: 60\n", source: "mine.yaml")
        #expect(policy.dkim.clockSkewSeconds == 60)
        #expect(policy.dkim.minimumRSAKeyBits == 1024)
        #expect(policy.limits == Policy.Limits())
    }

    @Test("Unknown settings, wrong types and forbidden combinations are refused", arguments: [
        "dkim:\n  clockskew: 60\n",
        "limits:\n  maxMessageBytes: lots\n",
        "sandbox:\n  enabled: false\n  mayDisable: false\n",
        "acceptedKinds: [flight, spaceship]\n",
        "- just\n- a list\n",
    ])
    func refused(yaml: String) {
        #expect {
            _ = try Policy(yaml: yaml, source: "bad.yaml")
        } throws: { error in
            (error as? AdmissionError)?.code == .policyInvalid
        }
    }

    @Test("A missing policy says where it looked")
    func missing() {
        #expect {
            _ = try Policy.load("nonexistent", searchPaths: [Self.directory])
        } throws: { error in
            (error as? AdmissionError)?.code == .policyNotFound
        }
    }
}

enum URLPath {
    /// `policies/` at the package root, found from this file's path.
    static var policies: String {
        let file = #filePath
        var components = file.split(separator: "/", omittingEmptySubsequences: false)
        components.removeLast(3)  // Tests/AdmissionTests/DomainNameTests.swift
        return components.joined(separator: "/") + "/policies"
    }
}
