import Depot
import Foundation
import GRDB
import GRDBSQLite

/// Binds, steps and reads a prepared GRDB statement through the SQLite C API: the hot loops of
/// bulk reads and writes, without per-row dictionaries, `Codable` or re-preparation.
struct SQLiteStatementRunner {
    let statement: OpaquePointer
    let connection: OpaquePointer?

    init(_ statement: Statement, _ db: Database) {
        self.statement = statement.sqliteStatement
        self.connection = db.sqliteConnection
    }

    /// `SQLITE_TRANSIENT`: SQLite copies the bytes before the bind call returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    func reset() {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
    }

    /// Binds `value` to parameter `index` (1-based).
    func bind(_ value: StoredValue, at index: Int32) -> Int32 {
        switch value {
        case .null:
            return sqlite3_bind_null(statement, index)
        case .bool(let flag):
            return sqlite3_bind_int64(statement, index, flag ? 1 : 0)
        case .integer(let number):
            return sqlite3_bind_int64(statement, index, number)
        case .double(let number):
            return sqlite3_bind_double(statement, index, number)
        case .date(let date):
            return sqlite3_bind_double(statement, index, date.timeIntervalSinceReferenceDate)
        case .decimal(let decimal):
            return bindText(decimal.description, at: index)
        case .text(let text):
            return bindText(text, at: index)
        case .blob(let data):
            if data.isEmpty { return sqlite3_bind_zeroblob(statement, index, 0) }
            return data.withUnsafeBytes { bytes in
                sqlite3_bind_blob64(statement, index, bytes.baseAddress, UInt64(bytes.count), Self.transient)
            }
        case .uuid(let uuid):
            return withUnsafeBytes(of: uuid.uuid) { bytes in
                sqlite3_bind_blob(statement, index, bytes.baseAddress, 16, Self.transient)
            }
        }
    }

    private func bindText(_ text: String, at index: Int32) -> Int32 {
        var text = text
        return text.withUTF8 { bytes in
            guard let base = bytes.baseAddress, bytes.count > 0 else {
                return sqlite3_bind_text(statement, index, "", 0, Self.transient)
            }
            return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) { chars in
                sqlite3_bind_text64(statement, index, chars, UInt64(bytes.count), Self.transient, UInt8(SQLITE_UTF8))
            }
        }
    }

    /// Binds every argument, in order.
    func bind(_ arguments: some Collection<StoredValue>) throws {
        var index: Int32 = 1
        for value in arguments {
            let code = bind(value, at: index)
            guard code == SQLITE_OK else { throw lastError(code) }
            index += 1
        }
    }

    /// Steps once: true when a row is available, false when done.
    func step() throws -> Bool {
        let code = sqlite3_step(statement)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw lastError(code)
        }
    }

    func lastError(_ code: Int32) -> SQLiteFailure {
        let extended = connection.map { sqlite3_extended_errcode($0) } ?? code
        let message = connection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? "SQLite error \(code)"
        return SQLiteFailure(code: code, extendedCode: extended, message: message)
    }

    /// The text of column `index` (0-based) of the current row, converted by SQLite if needed.
    func text(at index: Int32) -> String {
        // Pointer first, then length: the documented order when SQLite may convert the value.
        guard let pointer = sqlite3_column_text(statement, index) else { return "" }
        let count = Int(sqlite3_column_bytes(statement, index))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    /// Reads column `index` (0-based) of the current row as a stored value for a column of
    /// type `type`. A value of another storage class comes back as what it is, so decoding
    /// reports it ("holds TEXT 'abc', expected Int").
    func value(at index: Int32, type: ColumnType) -> StoredValue {
        switch sqlite3_column_type(statement, index) {
        case SQLITE_NULL:
            return .null
        case SQLITE_INTEGER:
            let number = sqlite3_column_int64(statement, index)
            switch type {
            case .bool: return number == 0 || number == 1 ? .bool(number == 1) : .integer(number)
            case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(number)))
            case .double: return .double(Double(number))
            case .decimal: return .decimal(Decimal(number))
            default: return .integer(number)
            }
        case SQLITE_FLOAT:
            let number = sqlite3_column_double(statement, index)
            return type == .date ? .date(Date(timeIntervalSinceReferenceDate: number)) : .double(number)
        case SQLITE_TEXT:
            let text = text(at: index)
            if type == .decimal, let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")),
                decimal.description == text
            {
                return .decimal(decimal)
            }
            return .text(text)
        default:
            let count = Int(sqlite3_column_bytes(statement, index))
            let data: Data
            if let pointer = sqlite3_column_blob(statement, index), count > 0 {
                data = Data(bytes: pointer, count: count)
            } else {
                data = Data()
            }
            if type == .uuid, count == 16 {
                return .uuid(data.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) })
            }
            return .blob(data)
        }
    }
}
