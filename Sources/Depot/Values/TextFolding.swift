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

extension TextFolding {
    /// ``fold(_:)``, then diacritics removed: each letter with diacritics of the Latin, Greek and
    /// Cyrillic blocks becomes its base letter (its canonical decomposition without combining
    /// marks: "ã" → "a", "ö" → "o", "ά" → "α"; letters without a decomposition, such as "ø" or
    /// "ł", stay), and combining marks left over are removed. Identical on every store:
    /// PostgreSQL's `depot_fold_diacritics` is generated from ``diacritics``.
    ///
    /// ```swift
    /// TextFolding.foldIgnoringDiacritics("São Paulo")  // "sao paulo"
    /// TextFolding.foldIgnoringDiacritics("Örebro")  // "orebro"
    /// ```
    public static func foldIgnoringDiacritics(_ text: String) -> String {
        let folded = fold(text)
        var isASCII = true
        for byte in folded.utf8 where byte >= 0x80 {
            isASCII = false
            break
        }
        if isASCII { return folded }
        let table = diacriticsLookup
        var result = String.UnicodeScalarView()
        for scalar in folded.unicodeScalars {
            if let base = table[scalar] {
                if let base { result.append(base) }
            } else {
                result.append(scalar)
            }
        }
        return String(result)
    }

    /// What ``foldIgnoringDiacritics(_:)`` does after folding: the letters it maps to their base
    /// letter, in scalar order, and the combining marks it removes.
    public static let diacritics: (mapped: [(Unicode.Scalar, Unicode.Scalar)], removed: [Unicode.Scalar]) = {
        let blocks: [ClosedRange<UInt32>] = [
            0x00C0...0x024F, 0x0370...0x03FF, 0x0400...0x052F, 0x1E00...0x1EFF, 0x1F00...0x1FFF,
        ]
        var mapped: [(Unicode.Scalar, Unicode.Scalar)] = []
        for block in blocks {
            for value in block {
                guard let scalar = Unicode.Scalar(value) else { continue }
                let bases = String(scalar).decomposedStringWithCanonicalMapping.unicodeScalars.filter {
                    !isCombiningMark($0)
                }
                if bases.count == 1, let base = bases.first, base != scalar { mapped.append((scalar, base)) }
            }
        }
        let removed = combiningMarks.flatMap { $0 }.compactMap(Unicode.Scalar.init)
        return (mapped, removed)
    }()

    /// The combining-mark blocks removed: diacritical marks, their extension and supplement, for
    /// symbols, and half marks.
    static let combiningMarks: [ClosedRange<UInt32>] = [
        0x0300...0x036F, 0x1AB0...0x1AFF, 0x1DC0...0x1DFF, 0x20D0...0x20FF, 0xFE20...0xFE2F,
    ]

    static func isCombiningMark(_ scalar: Unicode.Scalar) -> Bool {
        combiningMarks.contains { $0.contains(scalar.value) }
    }

    /// Each scalar ``foldIgnoringDiacritics(_:)`` changes: to its base letter, or to nothing.
    private static let diacriticsLookup: [Unicode.Scalar: Unicode.Scalar?] = {
        var table: [Unicode.Scalar: Unicode.Scalar?] = [:]
        for (scalar, base) in diacritics.mapped { table[scalar] = base }
        for mark in diacritics.removed { table[mark] = .some(nil) }
        return table
    }()
}
