import Depot

/// The names of what Depot installs in a database, each written once: the functions and the
/// collation statements call, the change-announcement channel, and the helper columns.
///
/// SQLite registers the functions on every connection (in Swift); PostgreSQL gets them from
/// ``PostgresDialect/setup(schema:)``.
public enum SQLFunctions {
    /// `depot_fold(text)`: `TextFolding.fold(_:)` of a text, for case-insensitive matching. SQLite
    /// registers the Swift function; PostgreSQL gets one SQL expression built from
    /// `TextFolding.caseFolding` (``PostgresDialect/foldFunction``), so rows written by any
    /// client fold the same way.
    public static let fold = "depot_fold"
    /// `depot_fold_diacritics(text)`: `TextFolding.foldIgnoringDiacritics(_:)`, for matching and
    /// ordering that ignore case and diacritics; registered (SQLite) or generated from
    /// `TextFolding.diacritics` (PostgreSQL) like ``fold``.
    public static let foldDiacritics = "depot_fold_diacritics"
    /// `depot_distance(lat0, lon0, lat, lon)`: haversine kilometres with exactly the operations of
    /// `GeoDistance.haversineKilometers(latitude1:longitude1:latitude2:longitude2:)`, in the same
    /// order, so distance order agrees on every store; NULL without coordinates.
    public static let distance = "depot_distance"
    /// `COLLATE depot_decimal`: orders exact decimals stored as text by value (SQLite).
    public static let decimalCollation = "depot_decimal"
    /// `depot_decimal_sum(value)`: the exact sum of decimals stored as text, as text (SQLite's own
    /// `SUM` would add them as doubles).
    public static let decimalSum = "depot_decimal_sum"
    /// `depot_integer_sum(value)`: the exact sum of integers, failing only when the sum itself
    /// exceeds Int64 (SQLite's own `SUM` fails on any running total beyond it).
    public static let integerSum = "depot_integer_sum"
    /// `depot_integer_total(value)`: the exact sum of integers as a double, for averages.
    public static let integerTotal = "depot_integer_total"
    /// `depot_add(a, b)`: `a + b` as PostgreSQL computes it in an update (SQLite): integers
    /// exactly, failing beyond Int64; doubles failing when finite operands overflow to infinity;
    /// exact decimals (stored as text) as text; NULL with a NULL.
    public static let add = "depot_add"
    /// `depot_announce_commit()`: the statement-level trigger function that announces a Depot
    /// table's changes on ``commitChannel`` (PostgreSQL).
    public static let announceCommit = "depot_announce_commit"
    /// The `LISTEN`/`NOTIFY` channel commits are announced on, and the name of each table's
    /// trigger (PostgreSQL).
    public static let commitChannel = "depot_commits"
    /// The session setting naming the Depot store that writes in a transaction (PostgreSQL).
    public static let writerSetting = "depot.writer"
    /// Separates the fields of a commit announcement's payload (the ASCII unit separator):
    /// `schema ␟ writer ␟ table`.
    public static let payloadSeparator: Character = "\u{1F}"
}
