/// The storage type of a column, chosen by the attribute's Swift type.
///
/// Each backend maps it to a native type: for example ``decimal`` is `TEXT` holding the exact
/// digits on SQLite and `numeric` on PostgreSQL; ``date`` keeps sub-millisecond precision.
public enum ColumnType: String, Sendable, Hashable, CaseIterable {
    case bool
    case integer
    case double
    case decimal
    case text
    case blob
    case date
    case uuid
    /// A URL, stored as its absolute string.
    case url
    /// A `Codable` value, stored as JSON text.
    case json
}
