extension String {
    /// The same as `lowercased()`, done byte by byte when the text is ASCII, as header field names, media types,
    /// transfer encodings and parameter names nearly always are (and without a copy when it is lower case already):
    /// `lowercased()` goes through Unicode's case mappings, a few percent of the prefilter's time in perf.
    var fastLowercased: String {
        var text = self
        return text.withUTF8 { utf8 -> String in
            guard utf8.allSatisfy({ $0 < 0x80 }) else { return lowercased() }
            guard utf8.contains(where: { $0 &- 0x41 < 26 }) else { return self }
            return String(unsafeUninitializedCapacity: utf8.count) { buffer in
                for index in utf8.indices {
                    let byte = utf8[index]
                    buffer[index] = byte &- 0x41 < 26 ? byte | 0x20 : byte
                }
                return utf8.count
            }
        }
    }
}
