extension RawMessage {
    /// The mailboxes of every `From` field, in order (RFC 5322 §3.6.2). More than one means a
    /// message whose author is ambiguous; DKIM alignment should refuse it (RFC 7489 §6.6.1).
    package var from: [MailAddress] { recipients(in: ["from"]) }

    /// The mailboxes of every field named in `fieldNames` (case-insensitive: `to`, `cc`,
    /// `reply-to`, `bcc`), in the order the fields appear, groups flattened.
    package func recipients(in fieldNames: [String] = ["to", "cc"]) -> [MailAddress] {
        let wanted = Set(fieldNames.map { $0.lowercased() })
        var addresses: [MailAddress] = []
        for field in headerFields where wanted.contains(field.lowercasedName) {
            addresses += MailAddress.list(in: field)
        }
        return addresses
    }
}
