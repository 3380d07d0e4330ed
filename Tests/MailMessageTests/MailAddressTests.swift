import Testing

@testable import MailMessage

@Suite struct MailAddressTests {
    @Test func angleAddressWithQuotedDisplayName() throws {
        let list = MailAddress.list(parsing: "\"Doe, Jane\" <Jane.Doe@Example.COM>")
        let address = try #require(list.first)
        #expect(list.count == 1)
        #expect(address.displayName == "Doe, Jane")
        #expect(address.localPart == "Jane.Doe")
        #expect(address.domain == "example.com")
        #expect(address.address == "Jane.Doe@example.com")
    }

    @Test func bareAddrSpecsAndAtoms() {
        let list = MailAddress.list(parsing: "a@example.com, John Q. Public <jqp@example.org>,b@example.net")
        #expect(list.map(\.address) == ["a@example.com", "jqp@example.org", "b@example.net"])
        #expect(list.map(\.displayName) == [nil, "John Q. Public", nil])
    }

    @Test func encodedWordDisplayNamesBAndQ() {
        let list = MailAddress.list(
            parsing: "=?UTF-8?B?SsO2cmc=?= <joerg@example.de>, =?iso-8859-1?Q?Andr=E9?= Pirard <pirard@example.be>,"
                + " \"=?utf-8?Q?Caf=C3=A9?= Team\" <team@example.fr>,"
                + " =?utf-8?q?Z=C3=BC?= =?iso-8859-2?q?=B1?= <x@example.pl>"
        )
        #expect(list.map(\.displayName) == ["Jörg", "André Pirard", "Café Team", "Züą"])
        #expect(list.map(\.address) == ["joerg@example.de", "pirard@example.be", "team@example.fr", "x@example.pl"])
    }

    @Test func groupsContributeTheirMembers() {
        let list = MailAddress.list(
            parsing: "A Group:Ed Jones <c@a.test>,joe@where.test,John <jdoe@one.test>;, Mary Smith <mary@x.test>")
        #expect(list.map(\.address) == ["c@a.test", "joe@where.test", "jdoe@one.test", "mary@x.test"])
        #expect(list.map(\.displayName) == ["Ed Jones", nil, "John", "Mary Smith"])
    }

    @Test(arguments: ["undisclosed-recipients:;", "Undisclosed recipients: ;", "undisclosed-recipients", "", " , ,"])
    func emptyGroupsAndNonAddressesYieldNothing(value: String) {
        #expect(MailAddress.list(parsing: value).isEmpty)
    }

    @Test func commentsAreSkippedAndNameALoneMailbox() {
        // RFC 5322 Appendix A.5.
        let list = MailAddress.list(
            parsing: "Pete(A nice \\) chap) <pete(his account)@silly.test(his host)>,"
                + " jdoe@example.org (John Doe), (x) <y@z.test>"
        )
        #expect(list.map(\.address) == ["pete@silly.test", "jdoe@example.org", "y@z.test"])
        #expect(list.map(\.displayName) == ["Pete", "John Doe", nil])
    }

    @Test func obsoleteForms() {
        // RFC 5322 §4.4: routes, whitespace around dots, empty list elements.
        let list = MailAddress.list(
            parsing: "<@route1.test,@route2.test:jdoe@example.test>, , john . doe @ example . org, <boss@nil.test>")
        #expect(list.map(\.address) == ["jdoe@example.test", "john.doe@example.org", "boss@nil.test"])
    }

    @Test func quotedLocalPartIsQuotedAgain() throws {
        let address = try #require(MailAddress.list(parsing: "\"john \\\"j\\\" doe\"@example.com").first)
        #expect(address.localPart == "john \"j\" doe")
        #expect(address.address == "\"john \\\"j\\\" doe\"@example.com")
    }

    @Test func domainLiteral() throws {
        let address = try #require(MailAddress.list(parsing: "Admin <root@[192.0.2.1]>").first)
        #expect(address.domain == "[192.0.2.1]")
    }

    @Test func unquotedAddressAsDisplayName() throws {
        let address = try #require(MailAddress.list(parsing: "jane@example.com <Jane@Example.com>").first)
        #expect(address.displayName == "jane@example.com")
        #expect(address.address == "Jane@example.com")
    }

    @Test func internationalizedAddress() throws {
        let address = try #require(MailAddress.list(parsing: "Jörg <jörg@BÜCHER.example>").first)
        #expect(address.localPart == "jörg")
        #expect(address.domain == "bücher.example")
    }

    @Test func malformedInputNeverTraps() {
        for value in [
            "<", ">", "@", "<@>", "a@", "@b", "\"unterminated", "(unterminated", "<a@b", "a@b>", "::;;,,<<>>@@",
            "[", "\\", "x:<y@z",
        ] {
            _ = MailAddress.list(parsing: value)
        }
        #expect(MailAddress.list(parsing: "<a@b").map(\.address) == ["a@b"])
        #expect(MailAddress.list(parsing: "x:<y@z").map(\.address) == ["y@z"])
        #expect(MailAddress.list(parsing: "a@").isEmpty)
    }

    @Test func messageConveniences() throws {
        let message = try RawMessage(
            "From: \"Example Air\" <noreply@example-air.com>\r\n"
                + "To: Eva Green <eva@example.net>,\r\n undisclosed-recipients:;\r\n"
                + "Cc: =?utf-8?Q?Bj=C3=B6rn?= <bjorn@example.se>\r\n"
                + "Reply-To: help@example-air.com\r\n"
                + "Subject: x\r\n\r\nbody")
        #expect(message.from.map(\.address) == ["noreply@example-air.com"])
        #expect(message.from.first?.displayName == "Example Air")
        #expect(message.recipients().map(\.address) == ["eva@example.net", "bjorn@example.se"])
        #expect(message.recipients(in: ["CC"]).first?.displayName == "Björn")
        #expect(message.recipients(in: ["reply-to"]).map(\.domain) == ["example-air.com"])
    }
}
