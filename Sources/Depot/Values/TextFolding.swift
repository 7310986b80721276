import Foundation

/// The one definition of case-insensitive text matching, shared by every store.
///
/// Engines disagree on case folding (SQLite's `lower()` is ASCII-only; PostgreSQL depends on the
/// collation), so Depot folds in Swift: canonical composition (NFC) first, then full Unicode case
/// folding ("STRASSE" matches "straße", "SÃO" matches "são"). SQL stores call the same function,
/// registered with the engine or applied to a stored copy of the column.
public enum TextFolding {
    /// The folded form of `text`: NFC, then full case folding, then NFC again.
    public static func fold(_ text: String) -> String {
        // ASCII: NFC is the identity and full case folding is lowercasing A–Z.
        var isASCII = true
        var hasUppercase = false
        for byte in text.utf8 {
            if byte >= 0x80 {
                isASCII = false
                break
            }
            if byte >= 0x41 && byte <= 0x5A { hasUppercase = true }
        }
        if isASCII {
            guard hasUppercase else { return text }
            return String(decoding: text.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
        }
        return text.precomposedStringWithCanonicalMapping
            .folding(options: [.caseInsensitive], locale: nil)
            .precomposedStringWithCanonicalMapping
    }

    /// Whether `haystack` contains `needle` as a run of UTF-8 bytes (no canonical equivalence,
    /// as SQL compares text).
    public static func containsBytes(_ haystack: String, _ needle: String) -> Bool {
        let hay = Array(haystack.utf8)
        let pin = Array(needle.utf8)
        if pin.isEmpty { return true }
        if pin.count > hay.count { return false }
        var start = 0
        let last = hay.count - pin.count
        while start <= last {
            if hay[start] == pin[0] {
                var index = 1
                while index < pin.count, hay[start + index] == pin[index] { index += 1 }
                if index == pin.count { return true }
            }
            start += 1
        }
        return false
    }

    /// Whether `text` starts with `prefix`, byte for byte.
    public static func hasPrefixBytes(_ text: String, _ prefix: String) -> Bool {
        text.utf8.starts(with: prefix.utf8)
    }

    /// Whether `text` ends with `suffix`, byte for byte.
    public static func hasSuffixBytes(_ text: String, _ suffix: String) -> Bool {
        text.utf8.reversed().starts(with: suffix.utf8.reversed())
    }
}
