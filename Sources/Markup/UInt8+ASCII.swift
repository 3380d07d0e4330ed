extension UInt8 {
    /// ASCII whitespace as the WHATWG Infra standard defines it, which HTML uses for splitting tokens
    /// and trimming: tab, line feed, form feed, carriage return and space.
    @inline(__always)
    var isASCIIWhitespace: Bool {
        self == 0x20 || self == 0x09 || self == 0x0A || self == 0x0C || self == 0x0D
    }
}
