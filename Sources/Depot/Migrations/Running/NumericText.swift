/// Which texts a column altered to a numeric type accepts, the same on every store: a decimal
/// number with an optional sign, fraction and exponent (`12`, `+5`, `-0.5`, `12.0`, `1e3`).
/// Spaces, hexadecimal, `nan` and `inf` are refused (Swift's `Double(_:)` takes them; SQLite's
/// `CAST` would turn them into 0 or a prefix, PostgreSQL into errors or NaN).
package enum NumericText {
    /// `text` as an integer: digits as they are (exactly, up to 64 bits); a fraction or an
    /// exponent when the number they spell is whole (`12.0`, `1e3`, read as a `Double`).
    package static func integer(_ text: some StringProtocol) -> Int64? {
        guard let shape = shape(of: text) else { return nil }
        if shape == .digits { return Int64(text) }
        guard let number = Double(text), number.rounded() == number, abs(number) < 9.2e18 else { return nil }
        return Int64(number)
    }

    /// `text` as a finite `Double`.
    package static func double(_ text: some StringProtocol) -> Double? {
        guard shape(of: text) != nil, let number = Double(text), number.isFinite else { return nil }
        return number
    }

    private enum Shape { case digits, decimal }

    /// `[+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?`: `.digits` when only the
    /// sign and digits are there.
    private static func shape(of text: some StringProtocol) -> Shape? {
        var bytes = text.utf8[...]
        if let first = bytes.first, first == UInt8(ascii: "+") || first == UInt8(ascii: "-") { bytes.removeFirst() }
        let integerDigits = bytes.prefix { isDigit($0) }.count
        bytes.removeFirst(integerDigits)
        var fractionDigits = 0
        var hasPoint = false
        if bytes.first == UInt8(ascii: ".") {
            hasPoint = true
            bytes.removeFirst()
            fractionDigits = bytes.prefix { isDigit($0) }.count
            bytes.removeFirst(fractionDigits)
        }
        guard integerDigits + fractionDigits > 0 else { return nil }
        var hasExponent = false
        if let first = bytes.first, first == UInt8(ascii: "e") || first == UInt8(ascii: "E") {
            hasExponent = true
            bytes.removeFirst()
            if let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { bytes.removeFirst() }
            let exponentDigits = bytes.prefix { isDigit($0) }.count
            guard exponentDigits > 0 else { return nil }
            bytes.removeFirst(exponentDigits)
        }
        guard bytes.isEmpty else { return nil }
        return hasPoint || hasExponent ? .decimal : .digits
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}
