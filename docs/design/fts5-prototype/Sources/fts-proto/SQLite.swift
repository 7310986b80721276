import CFTS
import DepotText
import Foundation

let transient = cfts_transient()
let emptyC: UnsafePointer<CChar> = UnsafePointer(strdup("")!)

/// A connection, with Depot's tokenizers and functions registered (as Depot would on every connection).
final class DB {
    let handle: OpaquePointer
    init(_ path: String, register: Bool = true) {
        var db: OpaquePointer?
        guard sqlite3_open(path, &db) == SQLITE_OK, let db else { fatalError("open \(path)") }
        handle = db
        if register {
            check(cfts_register_tokenizer(db, "depot", 0, split), "register depot")
            check(cfts_register_tokenizer(db, "depot_ci", 1, split), "register depot_ci")
            Functions.register(db)
        }
    }
    deinit { sqlite3_close_v2(handle) }

    func check(_ code: Int32, _ what: String) {
        if code != SQLITE_OK { fatalError("\(what): \(code) \(String(cString: sqlite3_errmsg(handle)))") }
    }

    func exec(_ sql: String) {
        var error: UnsafeMutablePointer<CChar>?
        if sqlite3_exec(handle, sql, nil, nil, &error) != SQLITE_OK {
            fatalError("\(sql): \(error.map { String(cString: $0) } ?? "?")")
        }
    }

    func prepare(_ sql: String) -> OpaquePointer {
        var statement: OpaquePointer?
        check(sqlite3_prepare_v2(handle, sql, -1, &statement, nil), "prepare \(sql)")
        return statement!
    }

    /// Rows of `sql` with text `arguments`, each row its columns as text (nil for NULL).
    func rows(_ sql: String, _ arguments: [String] = []) -> [[String?]] {
        let statement = prepare(sql)
        defer { sqlite3_finalize(statement) }
        for (index, argument) in arguments.enumerated() { bind(statement, Int32(index + 1), argument) }
        var rows: [[String?]] = []
        let columns = sqlite3_column_count(statement)
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else { fatalError("step \(sql): \(String(cString: sqlite3_errmsg(handle)))") }
            rows.append((0..<columns).map { column in
                sqlite3_column_text(statement, column).map { String(cString: $0) }
            })
        }
        return rows
    }

    func int(_ sql: String, _ arguments: [String] = []) -> Int {
        Int(rows(sql, arguments).first?.first??.description ?? "0") ?? 0
    }

    /// Bytes the database holds (pages in use, not free).
    var bytes: Int {
        (int("PRAGMA page_count") - int("PRAGMA freelist_count")) * int("PRAGMA page_size")
    }
}

func bind(_ statement: OpaquePointer, _ position: Int32, _ text: String?) {
    guard var text else {
        sqlite3_bind_null(statement, position)
        return
    }
    text.withUTF8 { bytes in
        _ = bytes.withMemoryRebound(to: CChar.self) {
            sqlite3_bind_text(statement, position, $0.baseAddress ?? emptyC, Int32($0.count), transient)
        }
    }
}

func text(of value: OpaquePointer?) -> String? {
    guard let value, sqlite3_value_type(value) == SQLITE_TEXT, let bytes = sqlite3_value_text(value) else {
        return nil
    }
    return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_value_bytes(value))), as: UTF8.self)
}

func resultText(_ context: OpaquePointer?, _ text: String) {
    var text = text
    text.withUTF8 { bytes in
        _ = bytes.withMemoryRebound(to: CChar.self) {
            sqlite3_result_text(context, $0.baseAddress ?? emptyC, Int32($0.count), transient)
        }
    }
}

/// The marker of a diacritic-free form in the `depot_ci` tokenizer: U+0001, a separator, so no
/// word holds it.
let marker: UInt8 = 0x01

/// The tokenizers' splitter: Depot's words (`TextSearch.words(of:)`), each once; in mode 1 each
/// word's diacritic-free form, when different, follows it colocated, marked with U+0001. A query
/// string that starts with the marker asks for marked forms (mode 1).
let split: cfts_split_fn = { mode, context, flags, pointer, count, xToken in
    guard let pointer, count > 0, let xToken else { return SQLITE_OK }
    let raw = UnsafeRawBufferPointer(start: pointer, count: Int(count))
    func emit(_ word: String, _ tflags: Int32) -> Int32 {
        var word = word
        return word.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) {
                xToken(context, tflags, $0.baseAddress, Int32($0.count), 0, count)
            }
        }
    }
    if mode == 1 && raw[0] == marker && (flags & FTS5_TOKENIZE_QUERY) != 0 {
        let rest = String(decoding: raw.dropFirst(), as: UTF8.self)
        for word in TextSearch.words(of: rest) {
            let plain = TextFolding.foldIgnoringDiacritics(word)
            if plain.isEmpty { continue }
            let code = emit("\u{1}" + plain, 0)
            if code != SQLITE_OK { return code }
        }
        return SQLITE_OK
    }
    let text = String(decoding: raw, as: UTF8.self)
    for word in TextSearch.words(of: text) {
        var code = emit(word, 0)
        if code != SQLITE_OK { return code }
        if mode == 1 && (flags & FTS5_TOKENIZE_DOCUMENT) != 0 {
            let plain = TextFolding.foldIgnoringDiacritics(word)
            if !plain.isEmpty && plain != word {
                code = emit("\u{1}" + plain, FTS5_TOKEN_COLOCATED)
                if code != SQLITE_OK { return code }
            }
        }
    }
    return SQLITE_OK
}

/// Depot's SQL functions as the prototype needs them.
enum Functions {
    static func register(_ db: OpaquePointer) {
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC
        sqlite3_create_function_v2(db, "depot_words", 1, flags, nil, words, nil, nil, nil)
        sqlite3_create_function_v2(db, "depot_fold_diacritics", 1, flags, nil, foldDiacritics, nil, nil, nil)
        sqlite3_create_function_v2(db, "depot_match", 2, flags, nil, match, nil, nil, nil)
        sqlite3_create_function_v2(db, "depot_exact", 2, flags, nil, exact, nil, nil, nil)
    }

    /// `depot_words(text)` as Depot's SQLiteFunctions writes it: a JSON array of the words.
    static let words: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
        context, _, arguments in
        guard let text = text(of: arguments?[0]) else { return resultText(context, "[]") }
        var json = "["
        for (position, word) in TextSearch.words(of: text).enumerated() {
            json += position == 0 ? "\"" : ",\""
            json += word
            json += "\""
        }
        resultText(context, json + "]")
    }

    static let foldDiacritics: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
        context, _, arguments in
        guard let text = text(of: arguments?[0]) else { return sqlite3_result_null(context) }
        resultText(context, TextFolding.foldIgnoringDiacritics(text))
    }

    /// `depot_match(text, tokens)`: TextSearch.matches, the tokens separated by spaces (a scan).
    static let match: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
        context, _, arguments in
        let tokens = (text(of: arguments?[1]) ?? "").split(separator: " ").map(String.init)
        sqlite3_result_int(context, TextSearch.matches(text(of: arguments?[0]), tokens: tokens, .caseInsensitive) ? 1 : 0)
    }

    /// `depot_exact(text, tokens)`: TextSearch.exactWords (the relevance's first key).
    static let exact: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
        context, _, arguments in
        let tokens = (text(of: arguments?[1]) ?? "").split(separator: " ").map(String.init)
        sqlite3_result_int(context, Int32(TextSearch.exactWords(text(of: arguments?[0]), tokens: tokens, .caseInsensitive)))
    }
}
