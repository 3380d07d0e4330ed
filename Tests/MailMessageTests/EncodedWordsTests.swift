import Testing

@testable import MailMessage

@Suite struct EncodedWordsTests {
    @Test(arguments: [
        ("=?UTF-8?B?Q2Fmw6k=?=", "Café"),
        ("=?utf-8?b?Q2Fmw6k?=", "Café"),  // lower-case encoding, no padding
        ("=?UTF-8?Q?Caf=C3=A9_au_lait?=", "Café au lait"),
        ("=?ISO-8859-1?Q?Andr=E9?= Pirard", "André Pirard"),  // RFC 2047 §8
        ("=?iso-8859-1?q?this=20is=20some=20text?=", "this is some text"),
        ("=?windows-1252?Q?=93Hi=94?=", "“Hi”"),
        ("=?koi8-r?B?8NLJ18XU?=", "Привет"),
        ("=?ISO-2022-JP?B?GyRCJCIbKEI=?=", "あ"),
        ("=?utf-8*en?Q?Hello?=", "Hello"),  // RFC 2231 §5 language
        // §8: whitespace between adjacent encoded words is dropped, around plain text kept.
        ("(=?ISO-8859-1?Q?a?= b)", "(a b)"),
        ("=?ISO-8859-1?Q?a?= =?ISO-8859-1?Q?b?=", "ab"),
        ("=?ISO-8859-1?Q?a?=  \t  =?ISO-8859-1?Q?b?=", "ab"),
        ("=?ISO-8859-1?Q?a_b?=", "a b"),
        ("=?ISO-8859-1?Q?a?= =?ISO-8859-2?Q?_b?=", "a b"),
        ("Re: =?utf-8?Q?Caf=C3=A9?= booking", "Re: Café booking"),
        ("Re:=?utf-8?Q?Caf=C3=A9?=", "Re:Café"),  // touching text, as some senders write
        // Mixed charsets in one subject.
        ("=?iso-8859-1?q?Caf=E9?= =?utf-8?b?4oKs?= =?windows-1252?q?=80?=", "Café€€"),
        // A UTF-8 character split over two words.
        ("=?utf-8?q?=E2=82?= =?utf-8?q?=AC?=", "€"),
        // Malformed words are left as written.
        ("=?utf-8?X?abc?=", "=?utf-8?X?abc?="),
        ("=?utf-8?Q?no end", "=?utf-8?Q?no end"),
        ("=?utf-8?Q?has space?=", "=?utf-8?Q?has space?="),
        ("=??Q?abc?=", "=??Q?abc?="),
        ("plain = ? text", "plain = ? text"),
        ("=?utf-8?Q?100=ZZ?=", "100=ZZ"),  // a malformed escape inside a word: kept
        ("=?x-unknown?Q?caf=C3=A9?=", "café"),  // unknown charset: read as UTF-8
        ("=?utf-8?Q?line=0D=0Abreak?=", "line  break"),  // no header injection through decoding
        ("Grüße", "Grüße"),  // raw UTF-8 (RFC 6532)
    ])
    func decodes(input: String, expected: String) {
        #expect(EncodedWords.decode(input) == expected)
    }

    @Test func rawLatin1HeaderBytesFallBackToWindows1252() {
        #expect(EncodedWords.decode(latin1("Gr\u{FC}\u{DF}e")[...]) == "Grüße")
    }
}
