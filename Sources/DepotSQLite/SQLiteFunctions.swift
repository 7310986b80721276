import Depot
import Foundation
import GRDB
import GRDBSQLite

/// The functions and collation Depot's SQLite statements use, registered on every connection,
/// so SQLite computes exactly what the in-memory store computes.
enum SQLiteFunctions {
    /// `depot_fold(text)`: `TextFolding.fold(_:)`, for case-insensitive matching; NULL for
    /// NULL and numbers. Registered through the C API: it runs once per row a search reads.
    static let fold: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
        context, _, arguments in
        result(arguments, context, TextFolding.fold)
    }

    /// `depot_fold_diacritics(text)`: `TextFolding.foldIgnoringDiacritics(_:)`; NULL for NULL and
    /// numbers.
    static let foldDiacritics: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
        context, _, arguments in
        result(arguments, context, TextFolding.foldIgnoringDiacritics)
    }

    /// `depot_words(text)`: `TextSearch.words(of:)` as a JSON array of strings (`[]` for NULL and
    /// numbers), for `json_each`. Words hold no quote, backslash or control character (all
    /// separators), so each is written between quotes as it is.
    static let words: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
        context, _, arguments in
        guard let argument = arguments?[0], let text = text(of: argument) else {
            sqlite3_result_text(context, "[]", 2, transient)
            return
        }
        var json = "["
        for (position, word) in TextSearch.words(of: text).enumerated() {
            json += position == 0 ? "\"" : ",\""
            json += word
            json += "\""
        }
        json += "]"
        json.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                sqlite3_result_text64(context, chars.baseAddress, UInt64(chars.count), transient, UInt8(SQLITE_UTF8))
            }
        }
    }

    /// `depot_exact_words(text, tokens)`: `TextSearch.exactWords(_:tokens:_:)` ignoring
    /// diacritics, the tokens joined by U+0001 (a separator: no token holds it); 0 for NULL.
    static let exactWords: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
        context, _, arguments in
        guard let arguments, let argument = arguments[0], let tokens = arguments[1].flatMap(text(of:)) else {
            sqlite3_result_int64(context, 0)
            return
        }
        let words = tokens.split(separator: "\u{1}").map(String.init)
        sqlite3_result_int64(
            context, Int64(TextSearch.exactWords(text(of: argument), tokens: words, .caseAndDiacriticInsensitive)))
    }

    /// `depot_search_ready(pending, query)` on a reader: `query`, or the error
    /// ``SQLFunctions/searchQueuePending`` when `pending` is not 0 (the store folds the queue
    /// through the writer and reads again).
    static let searchReadyOnReader:
        @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
            context, _, arguments in
            guard let arguments, sqlite3_value_int64(arguments[0]) == 0 else {
                sqlite3_result_error(context, SQLFunctions.searchQueuePending, -1)
                return
            }
            sqlite3_result_value(context, arguments[1])
        }

    /// `depot_search_ready(pending, query)` on a connection that writes: `query`. A transaction
    /// folds the queues before it searches, and its own statements queue changes as they run.
    static let searchReadyOnWriter:
        @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
            context, _, arguments in
            sqlite3_result_value(context, arguments?[1])
        }

    /// Sets `transform` of the first argument's text as the result (NULL without text).
    private static func result(
        _ arguments: UnsafeMutablePointer<OpaquePointer?>?, _ context: OpaquePointer?, _ transform: (String) -> String
    ) {
        guard let argument = arguments?[0], let text = text(of: argument) else {
            sqlite3_result_null(context)
            return
        }
        var folded = transform(text)
        folded.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                if let base = chars.baseAddress {
                    sqlite3_result_text64(context, base, UInt64(chars.count), transient, UInt8(SQLITE_UTF8))
                } else {
                    sqlite3_result_text(context, "", 0, transient)
                }
            }
        }
    }

    /// `depot_distance(lat0, lon0, lat, lon)`: haversine kilometres, NULL without coordinates.
    static let distance: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
        context, _, arguments in
        guard let arguments, let latitude1 = number(arguments[0]), let longitude1 = number(arguments[1]),
            let latitude2 = number(arguments[2]), let longitude2 = number(arguments[3])
        else {
            sqlite3_result_null(context)
            return
        }
        sqlite3_result_double(
            context,
            GeoDistance.haversineKilometers(
                latitude1: latitude1, longitude1: longitude1, latitude2: latitude2, longitude2: longitude2))
    }

    /// `depot_add(a, b)`: `a + b` as PostgreSQL computes it in an update (see `SQLFunctions.add`).
    static let add: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
        context, _, arguments in
        guard let arguments, let left = arguments[0], let right = arguments[1] else { return }
        switch (sqlite3_value_type(left), sqlite3_value_type(right)) {
        case (SQLITE_NULL, _), (_, SQLITE_NULL):
            sqlite3_result_null(context)
        case (SQLITE_INTEGER, SQLITE_INTEGER):
            let (sum, overflow) = sqlite3_value_int64(left).addingReportingOverflow(sqlite3_value_int64(right))
            if overflow {
                sqlite3_result_error(context, "integer overflow", -1)
            } else {
                sqlite3_result_int64(context, sum)
            }
        case (SQLITE_TEXT, _), (_, SQLITE_TEXT):
            guard let a = decimal(of: left), let b = decimal(of: right)
            else {
                sqlite3_result_error(
                    context, "depot overflow: an addition to a decimal met text that is not a number", -1)
                return
            }
            var sum = (a + b).description
            sum.withUTF8 { bytes in
                bytes.withMemoryRebound(to: CChar.self) { chars in
                    sqlite3_result_text64(
                        context, chars.baseAddress, UInt64(chars.count), transient, UInt8(SQLITE_UTF8))
                }
            }
        default:
            let a = sqlite3_value_double(left)
            let sum = a + sqlite3_value_double(right)
            if sum.isInfinite && a.isFinite {
                sqlite3_result_error(context, "depot overflow: value out of range", -1)
            } else {
                sqlite3_result_double(context, sum)
            }
        }
    }

    /// An exact decimal stored as text, or an integer or real as its value; nil for anything else.
    private static func decimal(of value: OpaquePointer) -> Decimal? {
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: Decimal(sqlite3_value_int64(value))
        case SQLITE_FLOAT: Decimal(sqlite3_value_double(value))
        default: text(of: value).flatMap { Decimal(string: $0, locale: Locale(identifier: "en_US_POSIX")) }
        }
    }

    /// Text, or a blob read as UTF-8 text (nil when it is not valid UTF-8); nil for anything else.
    private static func text(of value: OpaquePointer) -> String? {
        switch sqlite3_value_type(value) {
        case SQLITE_TEXT:
            guard let pointer = sqlite3_value_text(value) else { return "" }
            let count = Int(sqlite3_value_bytes(value))
            return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
        case SQLITE_BLOB:
            let count = Int(sqlite3_value_bytes(value))
            guard let pointer = sqlite3_value_blob(value), count > 0 else { return "" }
            return String(validating: UnsafeRawBufferPointer(start: pointer, count: count), as: UTF8.self)
        default:
            return nil
        }
    }

    /// An integer or floating-point argument as a `Double`; nil for anything else.
    private static func number(_ value: OpaquePointer?) -> Double? {
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER, SQLITE_FLOAT: sqlite3_value_double(value)
        default: nil
        }
    }

    /// `SQLITE_TRANSIENT`: SQLite copies the result before the call returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// `COLLATE depot_decimal`: orders exact decimals stored as text by value.
    static let decimal = DatabaseCollation(SQLFunctions.decimalCollation) { left, right in
        let posix = Locale(identifier: "en_US_POSIX")
        guard let a = Decimal(string: left, locale: posix), let b = Decimal(string: right, locale: posix) else {
            return left < right ? .orderedAscending : (left == right ? .orderedSame : .orderedDescending)
        }
        return a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
    }

    /// `depot_decimal_sum(value)`: the exact sum of decimals stored as text (integers and reals
    /// count as their value), as text; NULL when no value was summed. A text that is not a number
    /// fails the statement, naming it.
    struct DecimalSum: DatabaseAggregate {
        var sum: Decimal?

        mutating func step(_ values: [DatabaseValue]) throws {
            let addend: Decimal
            switch values.first?.storage {
            case .string(let text)?:
                guard let parsed = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                    throw DepotError(
                        .decodingFailed, "the sum of a decimal column met '\(text)', which is not a number")
                }
                addend = parsed
            case .int64(let number)?: addend = Decimal(number)
            case .double(let number)?: addend = Decimal(number)
            case .blob?, .null?, nil: return
            }
            sum = (sum ?? 0) + addend
        }

        func finalize() -> (any DatabaseValueConvertible)? { sum?.description }
    }

    /// The exact sum of integers (`depot_integer_sum`): running totals beyond Int64 are fine, as
    /// on PostgreSQL and in memory; only a final sum beyond Int64 fails (SQLite's own `SUM` fails
    /// on any running total, so the answer would depend on the rows' order).
    struct IntegerSum: DatabaseAggregate {
        var sum: Int128 = 0
        var any = false

        mutating func step(_ values: [DatabaseValue]) throws {
            switch values.first?.storage {
            case .int64(let number)?: sum += Int128(number)
            case .double(let number)? where number == number.rounded() && abs(number) < 0x1p63:
                sum += Int128(number)
            case .null?, nil: return
            default:
                throw DatabaseError(message: "depot overflow: an integer sum met a value that is not an integer")
            }
            any = true
        }

        func finalize() throws -> (any DatabaseValueConvertible)? {
            guard any else { return nil }
            guard let result = Int64(exactly: sum) else {
                throw DatabaseError(message: "depot overflow: integer sum exceeds Int64")
            }
            return result
        }
    }

    /// The exact sum of integers as a double (`depot_integer_total`), for averages: never fails.
    struct IntegerTotal: DatabaseAggregate {
        var sum = IntegerSum()

        mutating func step(_ values: [DatabaseValue]) throws { try sum.step(values) }

        func finalize() -> (any DatabaseValueConvertible)? { sum.any ? Double(sum.sum) : nil }
    }

    static func register(in db: Database) {
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC
        sqlite3_create_function_v2(db.sqliteConnection, SQLFunctions.fold, 1, flags, nil, fold, nil, nil, nil)
        sqlite3_create_function_v2(db.sqliteConnection, SQLFunctions.distance, 4, flags, nil, distance, nil, nil, nil)
        sqlite3_create_function_v2(
            db.sqliteConnection, SQLFunctions.foldDiacritics, 1, flags, nil, foldDiacritics, nil, nil, nil)
        sqlite3_create_function_v2(db.sqliteConnection, SQLFunctions.words, 1, flags, nil, words, nil, nil, nil)
        sqlite3_create_function_v2(db.sqliteConnection, SQLFunctions.add, 2, flags, nil, add, nil, nil, nil)
        sqlite3_create_function_v2(
            db.sqliteConnection, SQLFunctions.exactWords, 2, flags, nil, exactWords, nil, nil, nil)
        sqlite3_create_function_v2(
            db.sqliteConnection, SQLFunctions.searchReady, 2, flags, nil,
            db.configuration.readonly ? searchReadyOnReader : searchReadyOnWriter, nil, nil, nil)
        SQLiteSearchTokenizer.register(in: db)
        db.add(collation: decimal)
        db.add(function: DatabaseFunction(SQLFunctions.decimalSum, argumentCount: 1, aggregate: DecimalSum.self))
        db.add(function: DatabaseFunction(SQLFunctions.integerSum, argumentCount: 1, aggregate: IntegerSum.self))
        db.add(function: DatabaseFunction(SQLFunctions.integerTotal, argumentCount: 1, aggregate: IntegerTotal.self))
    }
}
