import NIOCore
import Testing

@testable import LMTP

@Suite("Reply encoding (RFC 5321 §4.2, RFC 2034)")
struct LMTPReplyTests {
    private func wire(_ reply: LMTPReply) -> String {
        var buffer = ByteBuffer()
        reply.write(to: &buffer)
        return String(buffer: buffer)
    }

    @Test func singleAndMultiLine() {
        #expect(wire(.ok()) == "250 2.0.0 OK\r\n")
        #expect(
            wire(LMTPReply(code: 250, enhancedCode: nil, text: "host\nPIPELINING\nSIZE 10"))
                == "250-host\r\n250-PIPELINING\r\n250 SIZE 10\r\n")
        #expect(
            wire(LMTPReply(code: 451, enhancedCode: "4.3.0", text: "one\ntwo")) == "451-4.3.0 one\r\n451 4.3.0 two\r\n")
        #expect(wire(LMTPReply(code: 250, enhancedCode: "2.0.0", text: "")) == "250 2.0.0\r\n")
    }

    @Test func textCannotInjectLines() {
        #expect(
            wire(LMTPReply(code: 550, enhancedCode: "5.1.1", text: "bad\r250 ok\u{0}é")) == "550 5.1.1 bad250 ok???\r\n"
        )
    }

    @Test(arguments: [
        (LMTPReply(code: 250, enhancedCode: "2.1.5", text: "x"), 250, "2.1.5"),
        (LMTPReply(code: 250, enhancedCode: "5.1.1", text: "x"), 250, "2.0.0"),
        (LMTPReply(code: 550, enhancedCode: "5.1", text: "x"), 550, "5.0.0"),
        (LMTPReply(code: 452, enhancedCode: "4.3.1000", text: "x"), 452, "4.0.0"),
        (LMTPReply(code: 354, enhancedCode: nil, text: "x"), 451, "4.3.0"),
        (LMTPReply(code: 99, enhancedCode: "2.0.0", text: "x"), 451, "4.3.0"),
        (LMTPReply(code: 700, enhancedCode: nil, text: "x"), 451, "4.3.0"),
    ])
    func normalizesHandlerReplies(reply: LMTPReply, code: Int, enhancedCode: String) {
        #expect(reply.normalized.code == code)
        #expect(reply.normalized.enhancedCode == enhancedCode)
    }

    @Test func nilEnhancedCodeStaysNil() {
        #expect(LMTPReply(code: 250, enhancedCode: nil, text: "x").normalized.enhancedCode == nil)
    }
}
