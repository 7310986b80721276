import Foundation

/// The one definition of case-insensitive text matching, shared by every store.
///
/// Engines disagree on case folding (SQLite's `lower()` is ASCII-only; PostgreSQL's depends on
/// the collation and does not fold "ß" to "ss"), so Depot defines it once: canonical composition
/// (NFC), then Unicode full case folding by the Unicode Character Database's own table
/// (`CaseFolding.txt`, statuses C and F, version ``unicodeVersion``), then NFC again.
/// "STRASSE" matches "straße", "SÃO" matches "são", "ᲀ" (U+1C80) matches "В".
///
/// Every store folds by this table: the in-memory store calls ``fold(_:)``, SQLite registers it
/// as the SQL function `depot_fold`, and PostgreSQL gets a `depot_fold` function generated from
/// the same table, so rows written by any client, Depot or not, match the same way.
///
/// ```swift
/// TextFolding.fold("Straße")  // "strasse"
/// TextFolding.fold("ΣΊΣΥΦΟΣ")  // "σίσυφοσ"
/// ```
public enum TextFolding {
    /// The folded form of `text`: NFC, then Unicode full case folding, then NFC again.
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
        let composed = text.precomposedStringWithCanonicalMapping
        let table = foldingLookup
        var folded = String.UnicodeScalarView()
        var changed = false
        for scalar in composed.unicodeScalars {
            if let target = table[scalar] {
                folded.append(contentsOf: target.unicodeScalars)
                changed = true
            } else {
                folded.append(scalar)
            }
        }
        return changed ? String(folded).precomposedStringWithCanonicalMapping : composed
    }

    /// Unicode full case folding as a list: each scalar that folds to something else, in scalar
    /// order, with what it folds to (one scalar for status C, several for status F).
    ///
    /// Stores that fold inside the database build their function from this list (PostgreSQL's
    /// `depot_fold`).
    public static let caseFolding: [(scalar: Unicode.Scalar, folded: String)] = caseFoldingSource.split(
        separator: "\n"
    ).compactMap { line in
        let scalars = line.split(separator: " ").compactMap { UInt32($0, radix: 16).flatMap(Unicode.Scalar.init) }
        guard let first = scalars.first, scalars.count > 1 else { return nil }
        var folded = String.UnicodeScalarView()
        folded.append(contentsOf: scalars.dropFirst())
        return (first, String(folded))
    }

    private static let foldingLookup: [Unicode.Scalar: String] = Dictionary(
        caseFolding.map { ($0.scalar, $0.folded) }, uniquingKeysWith: { first, _ in first })

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
