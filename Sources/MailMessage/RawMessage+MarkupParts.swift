extension RawMessage {
    /// The `text/html` and `application/ld+json` parts of this message, decoded to text, in document
    /// order, with everything inside an attached message/rfc822 left out (someone else's mail is
    /// never a source of this sender's markup). A single-part text/html message is one such part.
    ///
    /// Limits from `configuration` hold throughout: parts and depth while reading the structure,
    /// `maxDecodedBytesPerPart` for each part (cut, `mime.part-too-large`) and
    /// `maxDecodedBytesTotal` for all of them (`mime.total-too-large`, later parts skipped).
    package func markupParts(configuration: MIMETree.Configuration = MIMETree.Configuration()) -> MarkupParts {
        let tree = MIMETree(message: self, configuration: configuration)
        var result = MarkupParts(warnings: tree.warnings)
        var remaining = max(0, configuration.maxDecodedBytesTotal)
        let perPart = max(0, configuration.maxDecodedBytesPerPart)
        for part in tree.parts where !part.isInsideAttachedMessage {
            let kind: MarkupParts.Kind
            switch (part.contentType.type, part.contentType.subtype) {
            case ("text", "html"): kind = .html
            case ("application", "ld+json"): kind = .jsonLD
            default: continue
            }
            guard remaining > 0 else {
                result.warnings.append(
                    MIMEWarning(
                        code: MIMEWarning.Code.totalTooLarge, path: part.path,
                        message: "decoded parts exceed \(configuration.maxDecodedBytesTotal) bytes; part not decoded"
                    ))
                break
            }
            let limit = min(perPart, remaining)
            let decoded = part.decodedText(limit: limit)
            result.warnings += decoded.warnings
            if decoded.truncated {
                let code = limit < perPart ? MIMEWarning.Code.totalTooLarge : MIMEWarning.Code.partTooLarge
                result.warnings.append(
                    MIMEWarning(code: code, path: part.path, message: "decoded content cut at \(limit) bytes"))
            }
            remaining -= min(remaining, decoded.text.utf8.count)
            result.parts.append(
                MarkupParts.Part(
                    kind: kind, path: part.path, text: decoded.text, charset: decoded.charset,
                    isAttachment: part.isAttachment, truncated: decoded.truncated))
        }
        return result
    }
}
