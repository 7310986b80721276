/// The storage type of a column, chosen by the attribute's Swift type.
///
/// Each backend maps it to a native type: for example ``decimal`` is `TEXT` holding the exact
/// digits on SQLite and `numeric` on PostgreSQL; ``date`` keeps sub-millisecond precision.
public enum ColumnType: String, Sendable, Hashable, CaseIterable {
    /// A Boolean: `BOOLEAN` holding 0 or 1 on SQLite, `boolean` on PostgreSQL.
    case bool
    /// A signed 64-bit integer: `INTEGER` on SQLite, `bigint` on PostgreSQL.
    case integer
    /// A 64-bit floating-point number: `REAL` on SQLite, `double precision` on PostgreSQL.
    case double
    /// An exact decimal number (`Decimal`): its digits as text on SQLite (`DECIMAL_TEXT`, compared
    /// numerically), `numeric` on PostgreSQL.
    case decimal
    /// Text, compared byte-wise (UTF-8 order): `TEXT` on SQLite, `text` on PostgreSQL.
    case text
    /// Raw bytes (`Data`): `BLOB` on SQLite, `bytea` on PostgreSQL.
    case blob
    /// A point in time, kept to the microsecond: seconds since 2001-01-01 UTC on SQLite
    /// (`DATE_REAL`), `timestamptz` on PostgreSQL.
    case date
    /// A `UUID`: 16 bytes on SQLite (`UUID_BLOB`), `uuid` on PostgreSQL.
    case uuid
    /// A URL, stored as its absolute string.
    case url
    /// A `Codable` value, stored as JSON text.
    case json
}
