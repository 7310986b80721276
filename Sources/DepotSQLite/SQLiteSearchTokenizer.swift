import CDepotFTS5
import Depot
import DepotSQL
import GRDB
import GRDBSQLite

/// The FTS5 tokenizer behind SQLite's search indexes (`depot`), registered on every connection:
/// a text's tokens are exactly `TextSearch.words(of:)`, so an FTS5 index answers `.matches`
/// and `.relevance` as every other store does.
///
/// Each word whose diacritic-free form (`TextFolding.foldIgnoringDiacritics(_:)`) differs is
/// followed, at the same position, by that form marked with U+0001 (a separator, so no word
/// holds it): one index serves `TextMatching.caseAndDiacriticInsensitive` too. A query string
/// that starts with U+0001 asks for marked forms. ASCII text is split in C (`CDepotFTS5`), the
/// rest here.
@_spi(Benchmarks) public enum SQLiteSearchTokenizer {
    /// The tokenizer's name in `CREATE VIRTUAL TABLE … USING fts5(…, tokenize = 'depot')`.
    static let name = "depot"

    /// Registers the tokenizer on `db`; false when the SQLite library has no FTS5.
    @discardableResult
    static func register(in db: Database) -> Bool {
        depot_fts5_register(db.sqliteConnection, name, split) == SQLITE_OK
    }

    /// Registers the tokenizer, and the functions Depot's searches call, on a connection opened
    /// through SQLite's C API (the benchmarks' own connections run Depot's statements by hand);
    /// false when the library has no FTS5.
    @_spi(Benchmarks) public static func register(on handle: OpaquePointer) -> Bool {
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC
        sqlite3_create_function_v2(
            handle, SQLFunctions.searchReady, 2, flags, nil, SQLiteFunctions.searchReadyOnWriter, nil, nil, nil)
        sqlite3_create_function_v2(
            handle, SQLFunctions.exactWords, 2, flags, nil, SQLiteFunctions.exactWords, nil, nil, nil)
        return depot_fts5_register(handle, name, split) == SQLITE_OK
    }

    /// The marker of a diacritic-free form.
    static let marker: UInt8 = 0x01

    /// The tokens of `text` as the tokenizer emits them (`query` for a query string), through the
    /// C fast path where it applies: what tests compare with `TextSearch.words(of:)`.
    static func tokens(of text: String, query: Bool = false) -> [(token: String, colocated: Bool)] {
        final class Collected { var tokens: [(token: String, colocated: Bool)] = [] }
        let collected = Collected()
        var text = text
        text.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                _ = withExtendedLifetime(collected) {
                    depot_fts5_tokenize(
                        split, query ? FTS5_TOKENIZE_QUERY : FTS5_TOKENIZE_DOCUMENT, chars.baseAddress,
                        Int32(chars.count), Unmanaged.passUnretained(collected).toOpaque()
                    ) { context, flags, token, length, _, _ in
                        guard let context else { return SQLITE_ERROR }
                        let collected = Unmanaged<Collected>.fromOpaque(context).takeUnretainedValue()
                        let bytes = UnsafeRawBufferPointer(start: token, count: Int(length))
                        collected.tokens.append(
                            (String(decoding: bytes, as: UTF8.self), flags & FTS5_TOKEN_COLOCATED != 0))
                        return SQLITE_OK
                    }
                }
            }
        }
        return collected.tokens
    }

    /// The splitter for text the C fast path does not take.
    static let split: depot_fts5_split_fn = { context, flags, pointer, count, token in
        guard let pointer, count > 0, let token else { return SQLITE_OK }
        let raw = UnsafeRawBufferPointer(start: pointer, count: Int(count))
        func emit(_ word: String, _ tokenFlags: Int32) -> Int32 {
            var word = word
            return word.withUTF8 { bytes in
                bytes.withMemoryRebound(to: CChar.self) {
                    token(context, tokenFlags, $0.baseAddress, Int32($0.count), 0, count)
                }
            }
        }
        if raw[0] == marker && flags & FTS5_TOKENIZE_QUERY != 0 {
            for word in TextSearch.words(of: String(decoding: raw.dropFirst(), as: UTF8.self)) {
                let plain = TextFolding.foldIgnoringDiacritics(word)
                guard !plain.isEmpty else { continue }
                let code = emit("\u{1}" + plain, 0)
                guard code == SQLITE_OK else { return code }
            }
            return SQLITE_OK
        }
        let document = flags & FTS5_TOKENIZE_DOCUMENT != 0
        for word in TextSearch.words(of: String(decoding: raw, as: UTF8.self)) {
            var code = emit(word, 0)
            guard code == SQLITE_OK else { return code }
            guard document else { continue }
            let plain = TextFolding.foldIgnoringDiacritics(word)
            if !plain.isEmpty && plain != word {
                code = emit("\u{1}" + plain, FTS5_TOKEN_COLOCATED)
                guard code == SQLITE_OK else { return code }
            }
        }
        return SQLITE_OK
    }
}
