internal import COpenSSL

extension DKIMError {
    /// A failed OpenSSL call, with OpenSSL's error queue emptied into the reason.
    static func openSSL(_ code: Code, call: String) -> DKIMError {
        var details: [String] = []
        while true {
            let error = ERR_get_error()
            if error == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(error, &buffer, buffer.count)
            details.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        let suffix = details.isEmpty ? "" : ": " + details.joined(separator: "; ")
        return DKIMError(code: code, reason: "\(call) failed\(suffix)")
    }
}
