import Depot
import Foundation

/// DepotSync's own wire protocol: what `DepotSyncServer` serves and ``SyncServerFeed`` /
/// ``SyncServerPush`` ask for, so an app syncs an entity without writing its feed and push.
///
/// Per synced table, under a path the app chooses (`/sync` here):
///
/// - `GET /sync/{table}/feed?cursor=C&limit=N` answers a ``FeedPage``: without a cursor, a full
///   copy of the rows the caller may see, `limit` at a time in key order; then the changes since
///   the copy began. Rows are whole; a row deleted, or no longer visible to the caller, comes as
///   its key in `deleted`, and each row's version in `versions`. A cursor the server no longer
///   reaches answers `{"expired": true}`.
/// - `POST /sync/{table}/push` with an `Idempotency-Key` header and a ``Push`` body (with the
///   row's version the client last saw as `base_version`) answers a ``PushAnswer`` (with the
///   row's version after it): 200 applied, 409 conflict (with the server's row, field times and
///   version: a changed column differs from its base, or was written after `base_version`), 401/403
///   not allowed, 404 no such row, 422 a key reused for another request or values that do not fit
///   the table, 413 too large.
///
/// Rows are JSON objects by column name. Values follow the column's type: numbers for integers
/// and doubles (`"Infinity"` and `"-Infinity"` for infinite doubles), `true`/`false`, strings for text, URLs and JSON columns, decimals as their digits
/// (`"1.10"`), blobs in base64, UUIDs as text, dates in ISO 8601 with microseconds
/// (`"2026-11-27T09:30:00.000001Z"`); `null` for a nullable column without a value.
public enum SyncProtocol {
    /// One JSON value of a row.
    public enum Value: Codable, Hashable, Sendable {
        /// `null`.
        case null
        /// `true` or `false`.
        case bool(Bool)
        /// A number without a fraction that fits 64 bits.
        case integer(Int64)
        /// Any other number.
        case number(Double)
        /// A string.
        case string(String)

        /// Reads any of the five kinds; arrays and objects are refused.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let bool = try? container.decode(Bool.self) {
                self = .bool(bool)
            } else if let integer = try? container.decode(Int64.self) {
                // `-0` reads as the integer 0: a double's sign must survive.
                if integer == 0, let number = try? container.decode(Double.self), number.sign == .minus {
                    self = .number(number)
                } else {
                    self = .integer(integer)
                }
            } else if let number = try? container.decode(Double.self) {
                self = .number(number)
            } else if let string = try? container.decode(String.self) {
                self = .string(string)
            } else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "a row's value is null, a Boolean, a number or a string")
            }
        }

        /// Writes the value as the JSON it stands for.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .null: try container.encodeNil()
            case .bool(let bool): try container.encode(bool)
            case .integer(let integer): try container.encode(integer)
            case .number(let number): try container.encode(number)
            case .string(let string): try container.encode(string)
            }
        }
    }

    /// A row (or some of its columns), by column name.
    public typealias Row = [String: Value]

    /// One page of a table's feed.
    public struct FeedPage: Codable, Sendable, Equatable {
        /// Rows created or changed, whole, in the caller's view.
        public var rows: [Row]
        /// Keys of rows deleted or no longer visible to the caller (one array per key, in key
        /// column order).
        public var deleted: [[Value]]
        /// The cursor to ask from next ("" with `expired`).
        public var cursor: String
        /// Whether another page follows at once.
        public var more: Bool
        /// Whether the cursor asked from is no longer reached: copy in full again.
        public var expired: Bool
        /// Each row's version, in the order of ``rows``: the server's number of its last change
        /// (0 for a row no push or logged write has changed). A client sends the version it has
        /// as a push's `base_version`; absent from servers that keep none.
        public var versions: [Int]?

        /// A page from its parts.
        public init(
            rows: [Row], deleted: [[Value]], cursor: String, more: Bool, expired: Bool = false, versions: [Int]? = nil
        ) {
            self.rows = rows
            self.deleted = deleted
            self.cursor = cursor
            self.more = more
            self.expired = expired
            self.versions = versions
        }
    }

    /// One local edit pushed: a row's key, set or delete, the changed columns, their base.
    public struct Push: Codable, Sendable, Equatable {
        /// The row's key values, in key column order.
        public var key: [Value]
        /// `"set"` (columns changed, or a row created) or `"delete"`.
        public var operation: String
        /// The changed columns' new values (none for a delete).
        public var changes: Row
        /// The row as the client last had it from the server: what the server compares with its
        /// own row to find a conflict; `null` for a row the client created.
        public var base: Row?
        /// When the edit was made, by the client's clock (ISO 8601).
        public var editedAt: String
        /// The version of the row the client last had from the server (a feed page's or an
        /// answer's): the server answers a conflict when its row changed since, even back to the
        /// same values. Absent: only the base values are compared.
        public var baseVersion: Int?

        enum CodingKeys: String, CodingKey {
            case key, operation, changes, base
            case editedAt = "edited_at"
            case baseVersion = "base_version"
        }

        /// A push from its parts.
        public init(
            key: [Value], operation: String, changes: Row, base: Row?, editedAt: String, baseVersion: Int? = nil
        ) {
            self.key = key
            self.operation = operation
            self.changes = changes
            self.base = base
            self.editedAt = editedAt
            self.baseVersion = baseVersion
        }
    }

    /// The answer to a push.
    public struct PushAnswer: Codable, Sendable, Equatable {
        /// `"applied"` (200), `"resolved"` (200: the table resolves conflicts on the server) or `"conflict"` (409).
        public var status: String
        /// The row as the server holds it after the push (or, in a conflict, now); `null` when
        /// it does not exist.
        public var row: Row?
        /// When each column was last written by a push, by name (ISO 8601; absent: never).
        public var fieldTimes: [String: String]
        /// Why, for a conflict.
        public var message: String?
        /// The row's version after the push (or, in a conflict, now): the client's next
        /// `base_version` for it.
        public var version: Int?

        enum CodingKeys: String, CodingKey {
            case status, row, message, version
            case fieldTimes = "field_times"
        }

        /// An answer from its parts.
        public init(
            status: String, row: Row?, fieldTimes: [String: String], message: String? = nil, version: Int? = nil
        ) {
            self.status = status
            self.row = row
            self.fieldTimes = fieldTimes
            self.message = message
            self.version = version
        }

        /// `"applied"`.
        public static let applied = "applied"
        /// `"conflict"`.
        public static let conflict = "conflict"
    }

    /// An error answer: `{"error": "…"}`.
    public struct Problem: Codable, Sendable, Equatable {
        /// What was wrong, naming the table, column, key or header.
        public var error: String

        /// A problem saying `error`.
        public init(error: String) { self.error = error }
    }
}

// MARK: - Values

extension SyncProtocol {
    /// `stored` as the wire carries a value of a column of `type`.
    public static func value(_ stored: StoredValue, type: ColumnType) -> Value {
        switch stored {
        case .null: .null
        case .bool(let bool): .bool(bool)
        case .integer(let integer): type == .double ? .number(Double(integer)) : .integer(integer)
        case .double(let double) where double.isInfinite: .string(double < 0 ? "-Infinity" : "Infinity")
        case .double(let double): .number(double)
        case .decimal(let decimal): .string("\(decimal)")
        case .text(let text): .string(text)
        case .blob(let data): .string(data.base64EncodedString())
        case .date(let date): .string(timestamp(date))
        case .uuid(let uuid): .string(uuid.uuidString)
        }
    }

    /// The stored value a wire value stands for in `column` of `table`.
    ///
    /// - Throws: `DepotError` of kind `.decodingFailed` naming the table and column when the value
    ///   does not fit the column's type (or is `null` for a column that is not nullable).
    public static func stored(
        _ value: Value, column: TableDescription.ColumnDescription, table: String
    ) throws(DepotError) -> StoredValue {
        func refuse(_ expected: String) -> DepotError {
            DepotError(
                .decodingFailed, "\(table).\(column.name) takes \(expected), not \(value.excerpt)", table: table,
                column: column.name)
        }
        if case .null = value {
            guard column.isNullable else { throw refuse("a value (it is not nullable)") }
            return .null
        }
        switch (column.type, value) {
        case (.bool, .bool(let bool)): return .bool(bool)
        case (.integer, .integer(let integer)): return .integer(integer)
        case (.integer, .number(let number)):
            guard let integer = Int64(exactly: number) else { throw refuse("a whole number of 64 bits") }
            return .integer(integer)
        case (.double, .integer(let integer)): return .double(Double(integer))
        case (.double, .number(let number)): return .double(number)
        case (.double, .string("Infinity")): return .double(.infinity)
        case (.double, .string("-Infinity")): return .double(-.infinity)
        case (.decimal, .string(let text)):
            guard isDecimalText(text), let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")),
                !decimal.isNaN
            else { throw refuse("a decimal's digits") }
            return .decimal(decimal)
        case (.decimal, .integer(let integer)): return .decimal(Decimal(integer))
        case (.text, .string(let text)), (.json, .string(let text)): return .text(text)
        case (.url, .string(let text)):
            guard URL(string: text) != nil else { throw refuse("a URL") }
            return .text(text)
        case (.blob, .string(let text)):
            guard let data = Data(base64Encoded: text) else { throw refuse("base64 bytes") }
            return .blob(data)
        case (.date, .string(let text)):
            guard let date = date(text) else { throw refuse("an ISO 8601 date (2026-11-27T09:30:00.000001Z)") }
            return .date(date)
        case (.uuid, .string(let text)):
            guard let uuid = UUID(uuidString: text) else { throw refuse("a UUID") }
            return .uuid(uuid)
        default:
            throw refuse(column.type.wireDescription)
        }
    }

    /// A whole row of `table` (values in column order) as the wire carries it.
    public static func row(_ values: [StoredValue], of table: TableDescription) -> Row {
        var row = Row(minimumCapacity: values.count)
        for (column, value) in zip(table.columns, values) { row[column.name] = Self.value(value, type: column.type) }
        return row
    }

    /// Some columns of a row of `table`, by name.
    public static func row(_ values: [String: StoredValue], of table: TableDescription) -> Row {
        var row = Row(minimumCapacity: values.count)
        for column in table.columns {
            if let value = values[column.name] { row[column.name] = Self.value(value, type: column.type) }
        }
        return row
    }

    /// The stored values of a wire row of `table`, by column name.
    ///
    /// - Throws: `DepotError` naming the table and column for a column the table does not have
    ///   (`.missingColumns`) or a value that does not fit it (`.decodingFailed`).
    public static func values(_ row: Row, of table: TableDescription) throws(DepotError) -> [String: StoredValue] {
        var values: [String: StoredValue] = [:]
        for (name, value) in row {
            guard let column = table.columns.first(where: { $0.name == name }) else {
                throw DepotError(
                    .missingColumns, "\(table.name) has no column '\(name)'", table: table.name, column: name)
            }
            values[name] = try stored(value, column: column, table: table.name)
        }
        return values
    }

    /// The stored values of a key of `table`, in key column order.
    ///
    /// - Throws: `DepotError` of kind `.decodingFailed` when the key has another number of values
    ///   than the table's key columns, or a value does not fit its column.
    public static func key(_ key: [Value], of table: TableDescription) throws(DepotError) -> [StoredValue] {
        guard key.count == table.primaryKey.count else {
            throw DepotError(
                .decodingFailed,
                "a key of \(table.name) has \(table.primaryKey.count) value(s) (\(table.primaryKey.joined(separator: ", "))), "
                    + "not \(key.count)", table: table.name)
        }
        var values: [StoredValue] = []
        for (name, value) in zip(table.primaryKey, key) {
            guard let column = table.columns.first(where: { $0.name == name }) else {
                throw DepotError(.missingColumns, "\(table.name) has no key column '\(name)'", table: table.name)
            }
            let stored = try stored(value, column: column, table: table.name)
            guard !stored.isNull else {
                throw DepotError(
                    .decodingFailed, "a key of \(table.name) has no value for \(name)", table: table.name, column: name)
            }
            values.append(stored)
        }
        return values
    }

    /// A key of `table` as the wire carries it.
    public static func key(_ values: [StoredValue], of table: TableDescription) -> [Value] {
        zip(table.primaryKey, values).map { name, value in
            Self.value(value, type: table.columns.first { $0.name == name }?.type ?? .text)
        }
    }
}

extension SyncProtocol {
    /// Whether `text` is a plain decimal number: `-12.50`, `3`, `1e-3`.
    static func isDecimalText(_ text: String) -> Bool {
        var bytes = Substring(text).utf8[...]
        func digits() -> Int {
            let count = bytes.prefix { (48...57).contains($0) }.count
            bytes = bytes.dropFirst(count)
            return count
        }
        if bytes.first == 45 { bytes = bytes.dropFirst() }
        var count = digits()
        if bytes.first == 46 {
            bytes = bytes.dropFirst()
            count += digits()
        }
        guard count > 0 else { return false }
        if bytes.first == 101 || bytes.first == 69 {
            bytes = bytes.dropFirst()
            if bytes.first == 45 || bytes.first == 43 { bytes = bytes.dropFirst() }
            guard digits() > 0 else { return false }
        }
        return bytes.isEmpty
    }
}

extension SyncProtocol.Value {
    /// The kind and a short excerpt, for messages.
    var excerpt: String {
        switch self {
        case .null: "null"
        case .bool(let bool): "\(bool)"
        case .integer(let integer): "\(integer)"
        case .number(let number): "\(number)"
        case .string(let text): "\"\(text.unicodeScalars.count > 40 ? String(text.prefix(40)) + "…" : text)\""
        }
    }
}

extension ColumnType {
    /// What a wire value of this type looks like, for messages.
    var wireDescription: String {
        switch self {
        case .bool: "true or false"
        case .integer: "a whole number"
        case .double: "a number"
        case .decimal: "a decimal's digits as a string"
        case .text, .json: "a string"
        case .url: "a URL string"
        case .blob: "base64 bytes"
        case .date: "an ISO 8601 date string"
        case .uuid: "a UUID string"
        }
    }
}

// MARK: - Dates

extension SyncProtocol {
    private static let unixOffsetSeconds: Int64 = 978_307_200

    /// `date` in ISO 8601, UTC, to the microsecond: `2026-11-27T09:30:00.000001Z`. Years outside
    /// 0…9999 take ISO 8601's expanded form, signed: `+12026-…`, `-0044-…`.
    public static func timestamp(_ date: Date) -> String {
        // Microseconds since 2001 split first: no step can overflow, whatever the date.
        let (since2001, fraction) = date.microseconds.quotientAndRemainder(dividingBy: 1_000_000)
        let seconds = (fraction < 0 ? since2001 - 1 : since2001) + unixOffsetSeconds
        let micro = fraction < 0 ? fraction + 1_000_000 : fraction
        let (quotient, remainder) = seconds.quotientAndRemainder(dividingBy: 86_400)
        let (days, daySeconds) = remainder < 0 ? (quotient - 1, remainder + 86_400) : (quotient, remainder)
        let (year, month, day) = CivilDate.date(daysSince1970: days)
        func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value.magnitude)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let yearText = (0...9999).contains(year) ? pad(year, 4) : (year < 0 ? "-" : "+") + pad(year, 4)
        return "\(yearText)-\(pad(month, 2))-\(pad(day, 2))T\(pad(daySeconds / 3600, 2)):"
            + "\(pad(daySeconds / 60 % 60, 2)):\(pad(daySeconds % 60, 2)).\(pad(micro, 6))Z"
    }

    /// The date an ISO 8601 timestamp names (`YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`, or a
    /// signed year of 4 to 6 digits within ±200,000), rounded to the microsecond; `nil` for
    /// anything else.
    public static func date(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        var index = 0
        func number(_ width: Int) -> Int64? {
            guard index + width <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[index..<index + width] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - 48)
            }
            index += width
            return value
        }
        func expect(_ character: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == character else { return false }
            index += 1
            return true
        }
        // Four digits, or a sign and four to six (ISO 8601's expanded years).
        let sign: Int64? = expect(43) ? 1 : expect(45) ? -1 : nil
        var yearDigits = 0
        while index + yearDigits < bytes.count, (48...57).contains(bytes[index + yearDigits]) { yearDigits += 1 }
        guard sign == nil ? yearDigits == 4 : (4...6).contains(yearDigits), let unsigned = number(yearDigits),
            unsigned <= 200_000
        else { return nil }
        let year = (sign ?? 1) * unsigned
        guard expect(45), let month = number(2), expect(45), let day = number(2),
            expect(84) || expect(116), let hour = number(2), expect(58), let minute = number(2), expect(58),
            let second = number(2), (1...12).contains(month), (1...daysIn(month, year)).contains(day), hour < 24,
            minute < 60, second < 60
        else { return nil }
        var nanos: Int64 = 0
        if expect(46) {
            var digits = 0
            while index < bytes.count, (48...57).contains(bytes[index]) {
                if digits < 9 { nanos = nanos * 10 + Int64(bytes[index] - 48) }
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            if digits < 9 { for _ in digits..<9 { nanos *= 10 } }
        }
        var offset: Int64 = 0
        if expect(90) || expect(122) {
            offset = 0
        } else if index < bytes.count, bytes[index] == 43 || bytes[index] == 45 {
            let sign: Int64 = bytes[index] == 45 ? -1 : 1
            index += 1
            guard let hours = number(2), expect(58), let minutes = number(2), hours < 24, minutes < 60 else {
                return nil
            }
            offset = sign * (hours * 3600 + minutes * 60)
        } else {
            return nil
        }
        guard index == bytes.count else { return nil }
        // Within ±200,000 years every step fits 64 bits.
        let seconds =
            CivilDate.days(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second - offset
        let micros = (seconds - unixOffsetSeconds) * 1_000_000 + (nanos + 500) / 1000
        return Date(microseconds: micros)
    }

    private static func daysIn(_ month: Int64, _ year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

}
