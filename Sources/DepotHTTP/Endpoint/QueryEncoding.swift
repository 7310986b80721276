import Foundation

/// Percent-encoding for query strings, form bodies and paths.
///
/// Stricter than `URLComponents`: only unreserved characters (RFC 3986: letters, digits,
/// `-._~`) stay as they are, so `+`, `&`, `=` and spaces in values arrive as sent (`+` as
/// `%2B`, a space as `%20`) whether the server reads the query as RFC 3986 or as a form.
enum QueryEncoding {
    static func encode(_ items: [URLQueryItem]) -> String {
        var result = ""
        for (index, item) in items.enumerated() {
            if index > 0 { result += "&" }
            result += escape(item.name)
            if let value = item.value {
                result += "="
                result += escape(value)
            }
        }
        return result
    }

    static func escape(_ string: String) -> String {
        escape(string) { isUnreserved($0) }
    }

    /// A path keeps its `/` separators and the characters RFC 3986 allows in segments.
    static func escapePath(_ path: String) -> String {
        escape(path) { byte in
            isUnreserved(byte) || pathAllowed.contains(byte)
        }
    }

    private static let pathAllowed: Set<UInt8> = Set("/!$&'()*+,;=:@%".utf8)

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    private static let hex = Array("0123456789ABCDEF".utf8)

    private static func escape(_ string: String, keeping keep: (UInt8) -> Bool) -> String {
        let utf8 = string.utf8
        if utf8.allSatisfy(keep) { return string }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count * 3)
        for byte in utf8 {
            if keep(byte) {
                bytes.append(byte)
            } else {
                bytes.append(UInt8(ascii: "%"))
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
