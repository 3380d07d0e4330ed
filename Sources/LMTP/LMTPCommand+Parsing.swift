extension LMTPCommand {
    /// The longest command line, CRLF included (RFC 5321 §4.5.3.1.4).
    static let maximumLineBytes = 512
    /// The longest MAIL or RCPT line, CRLF included: parameters may extend the limit (RFC 5321 §4.5.3.1.4,
    /// RFC 1869 §4.1.2). Longer lines of any command are discarded while they arrive, never buffered whole.
    static let maximumParameterLineBytes = 4096

    /// Parses one command line without its line end. Verbs, `FROM:`/`TO:`, parameter keywords and values are
    /// case-insensitive (RFC 5321 §2.4); paths are kept as sent.
    static func parse(_ line: [UInt8]) -> Result<LMTPCommand, Rejection> {
        var end = line.count
        while end > 0, line[end - 1] == .space || line[end - 1] == .tab { end -= 1 }
        var verbEnd = 0
        while verbEnd < end, line[verbEnd] != .space { verbEnd += 1 }
        let verb = line[0..<verbEnd]
        var argumentStart = verbEnd
        while argumentStart < end, line[argumentStart] == .space { argumentStart += 1 }
        let arguments = line[argumentStart..<end]

        let takesParameters = verb.equalsIgnoringCase("MAIL") || verb.equalsIgnoringCase("RCPT")
        let limit = takesParameters ? maximumParameterLineBytes : maximumLineBytes
        guard line.count + 2 <= limit else { return .failure(Rejection(reply: .lineTooLong)) }

        if verb.equalsIgnoringCase("LHLO") { return parseLHLO(arguments) }
        if verb.equalsIgnoringCase("MAIL") { return parseMail(arguments) }
        if verb.equalsIgnoringCase("RCPT") { return parseRecipient(arguments) }
        if verb.equalsIgnoringCase("DATA") { return noArguments(.data, arguments) }
        if verb.equalsIgnoringCase("RSET") { return noArguments(.reset, arguments) }
        if verb.equalsIgnoringCase("QUIT") { return noArguments(.quit, arguments) }
        if verb.equalsIgnoringCase("NOOP") { return .success(.noop) }
        if verb.equalsIgnoringCase("HELP") { return .success(.help) }
        if verb.equalsIgnoringCase("VRFY") {
            guard !arguments.isEmpty else { return .failure(Rejection(reply: .syntaxError("VRFY needs an argument"))) }
            return .success(.verify)
        }
        if verb.equalsIgnoringCase("HELO") || verb.equalsIgnoringCase("EHLO") { return .success(.smtpGreeting) }
        for known in ["EXPN", "BDAT", "STARTTLS", "AUTH", "ETRN", "TURN", "ATRN", "SEND", "SOML", "SAML"]
        where verb.equalsIgnoringCase(known) {
            return .success(.notImplemented)
        }
        return .failure(Rejection(reply: .unrecognizedCommand))
    }

    private static func noArguments(_ command: LMTPCommand, _ arguments: ArraySlice<UInt8>) -> Result<
        LMTPCommand, Rejection
    > {
        arguments.isEmpty
            ? .success(command) : .failure(Rejection(reply: .syntaxError("This command takes no arguments")))
    }

    /// RFC 2033 §4.1: `LHLO SP ( Domain / address-literal )`.
    private static func parseLHLO(_ arguments: ArraySlice<UInt8>) -> Result<LMTPCommand, Rejection> {
        guard !arguments.isEmpty, arguments.count <= 255, arguments.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            return .failure(Rejection(reply: .syntaxError("Expected LHLO <hostname>")))
        }
        return .success(.lhlo(clientName: String(decoding: arguments, as: UTF8.self)))
    }

    /// RFC 5321 §4.1.1.2: `MAIL FROM:<reverse-path> [SP mail-parameters]`.
    private static func parseMail(_ arguments: ArraySlice<UInt8>) -> Result<LMTPCommand, Rejection> {
        guard let (path, rest) = taggedPath(arguments, tag: "FROM:") else {
            return .failure(Rejection(reply: .syntaxError("Expected MAIL FROM:<address>")))
        }
        guard let sender = MailPath.reversePath(path) else { return .failure(Rejection(reply: .badSenderSyntax)) }
        var parameters = MailParameters()
        guard let list = parameterList(rest) else {
            return .failure(Rejection(reply: .syntaxError("Malformed MAIL parameters")))
        }
        for (keyword, value) in list {
            if keyword.equalsIgnoringCase("SIZE") {
                guard parameters.size == nil, let value, let size = decimal(value) else {
                    return .failure(Rejection(reply: .syntaxError("SIZE needs one decimal value (RFC 1870)")))
                }
                parameters.size = size
            } else if keyword.equalsIgnoringCase("BODY") {
                guard parameters.body == nil, let value else {
                    return .failure(Rejection(reply: .syntaxError("BODY needs one value (RFC 6152)")))
                }
                if value.equalsIgnoringCase("7BIT") {
                    parameters.body = .sevenBit
                } else if value.equalsIgnoringCase("8BITMIME") {
                    parameters.body = .eightBitMIME
                } else {
                    return .failure(Rejection(reply: .syntaxError("BODY must be 7BIT or 8BITMIME")))
                }
            } else {
                return .failure(Rejection(reply: .unknownParameter("MAIL parameter not supported")))
            }
        }
        return .success(.mail(sender: sender, parameters: parameters))
    }

    /// RFC 5321 §4.1.1.3: `RCPT TO:<forward-path> [SP rcpt-parameters]`; no RCPT parameter is advertised.
    private static func parseRecipient(_ arguments: ArraySlice<UInt8>) -> Result<LMTPCommand, Rejection> {
        guard let (path, rest) = taggedPath(arguments, tag: "TO:") else {
            return .failure(Rejection(reply: .syntaxError("Expected RCPT TO:<address>")))
        }
        guard let recipient = MailPath.forwardPath(path) else { return .failure(Rejection(reply: .badRecipientSyntax)) }
        guard let list = parameterList(rest) else {
            return .failure(Rejection(reply: .syntaxError("Malformed RCPT parameters")))
        }
        guard list.isEmpty else { return .failure(Rejection(reply: .unknownParameter("RCPT parameter not supported"))) }
        return .success(.recipient(recipient))
    }

    /// Splits `FROM:<path> rest` (tag case-insensitive, spaces tolerated after the colon as many clients send
    /// them) into the bytes between the angle brackets and what follows the closing bracket.
    private static func taggedPath(
        _ arguments: ArraySlice<UInt8>, tag: String
    ) -> (path: ArraySlice<UInt8>, rest: ArraySlice<UInt8>)? {
        let tagBytes = Array(tag.utf8)
        guard arguments.count > tagBytes.count,
            arguments.prefix(tagBytes.count).equalsIgnoringCase(tag)
        else { return nil }
        var index = arguments.startIndex + tagBytes.count
        while index < arguments.endIndex, arguments[index] == .space { index += 1 }
        guard let (path, after) = MailPath.angleBracketed(arguments[index...]) else { return nil }
        return (path, arguments[after...])
    }

    /// `*(SP esmtp-param)` after the path (RFC 5321 §4.1.2): `esmtp-keyword ["=" esmtp-value]`.
    /// Nil if malformed; keywords must be unique.
    private static func parameterList(
        _ rest: ArraySlice<UInt8>
    ) -> [(keyword: ArraySlice<UInt8>, value: ArraySlice<UInt8>?)]? {
        guard !rest.isEmpty else { return [] }
        guard rest.first == .space else { return nil }
        var list: [(keyword: ArraySlice<UInt8>, value: ArraySlice<UInt8>?)] = []
        for parameter in rest.split(separator: .space) {
            let equals = parameter.firstIndex(of: UInt8(ascii: "="))
            let keyword = parameter[..<(equals ?? parameter.endIndex)]
            guard let first = keyword.first, first.isASCIIAlphanumeric,
                keyword.allSatisfy({ $0.isASCIIAlphanumeric || $0 == UInt8(ascii: "-") })
            else { return nil }
            var value: ArraySlice<UInt8>?
            if let equals {
                let text = parameter[(equals + 1)...]
                // esmtp-value = 1*(%d33-60 / %d62-126)
                guard !text.isEmpty, text.allSatisfy({ (33...126).contains($0) && $0 != UInt8(ascii: "=") }) else {
                    return nil
                }
                value = text
            }
            guard !list.contains(where: { $0.keyword.equalsIgnoringCase(keyword) }) else { return nil }
            list.append((keyword, value))
        }
        return list
    }

    /// A decimal number of any length (the line limit bounds it); `Int.max` when it does not fit, which is over any
    /// limit: a SIZE too large to count is a message too big (552 5.3.4), not a syntax error (RFC 1870 §6.1).
    private static func decimal(_ digits: ArraySlice<UInt8>) -> Int? {
        guard !digits.isEmpty, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        var value = 0
        for digit in digits {
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(Int(digit - 0x30))
            guard !overflow1, !overflow2 else { return Int.max }
            value = sum
        }
        return value
    }
}

extension UInt8 {
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")
    static let cr = UInt8(ascii: "\r")
    static let lf = UInt8(ascii: "\n")
    static let dot = UInt8(ascii: ".")

    var isASCIIAlphanumeric: Bool {
        (0x30...0x39).contains(self) || (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self)
    }

    var asciiUppercased: UInt8 { (0x61...0x7A).contains(self) ? self - 0x20 : self }
}

extension Collection<UInt8> {
    /// Whether the bytes spell `text` (ASCII), ignoring ASCII case.
    func equalsIgnoringCase(_ text: String) -> Bool {
        guard count == text.utf8.count else { return false }
        return zip(self, text.utf8).allSatisfy { $0.asciiUppercased == $1.asciiUppercased }
    }

    /// Whether both byte strings are equal ignoring ASCII case.
    func equalsIgnoringCase(_ other: some Collection<UInt8>) -> Bool {
        guard count == other.count else { return false }
        return zip(self, other).allSatisfy { $0.asciiUppercased == $1.asciiUppercased }
    }
}
