internal import Foundation

/// A place in the change feed as clients hold it: opaque text they pass back (`after=`), standing for the position of
/// the last change they processed. It survives restarts (positions are stored with the changes) and store copies.
///
/// The text is base64url (RFC 4648 §5, no padding) of a version byte and the position as 8 bytes, big-endian, so that
/// the form can change later while old cursors stay readable.
package struct ChangeCursor: Hashable, Sendable, CustomStringConvertible {
    /// The position of the last change seen; 0 before the first.
    package var position: Int64

    package init(position: Int64) {
        self.position = max(0, position)
    }

    /// The start of the feed: every change comes after it.
    package static let start = ChangeCursor(position: 0)

    /// Reads a cursor the gateway handed out; nil for anything else.
    package init?(_ text: String) {
        guard text.utf8.count == 12, text.utf8.allSatisfy(Self.isBase64URLByte) else { return nil }
        let standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        guard let data = Data(base64Encoded: standard), data.count == 9, data[data.startIndex] == 1 else { return nil }
        var position: UInt64 = 0
        for byte in data.dropFirst() { position = position << 8 | UInt64(byte) }
        guard position <= UInt64(Int64.max) else { return nil }
        self.position = Int64(position)
    }

    package var description: String {
        var bytes: [UInt8] = [1]
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: position >> shift)) }
        return Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
    }

    private static func isBase64URLByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }
}
