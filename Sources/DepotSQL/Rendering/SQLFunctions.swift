import Depot

/// The names of what Depot installs in a database, each written once: the functions and the
/// collation statements call, the change-announcement channel, and the helper columns.
///
/// SQLite registers the functions on every connection (in Swift); PostgreSQL gets them from
/// ``SQLRenderer/postgresSetup(schema:)``.
public enum SQLFunctions {
    /// `depot_fold(text)`: `TextFolding.fold(_:)` of a text, for case-insensitive matching
    /// (SQLite).
    public static let fold = "depot_fold"
    /// `depot_distance(lat0, lon0, lat, lon)`: haversine kilometres with exactly the operations of
    /// `GeoDistance.haversineKilometers(latitude1:longitude1:latitude2:longitude2:)`, in the same
    /// order, so distance order agrees on every store; NULL without coordinates.
    public static let distance = "depot_distance"
    /// `COLLATE depot_decimal`: orders exact decimals stored as text by value (SQLite).
    public static let decimalCollation = "depot_decimal"
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

extension SQLRenderer {
    // MARK: - What Depot installs (PostgreSQL)

    /// The statements that make a PostgreSQL database ready for Depot, run in one transaction:
    /// take the setup lock (concurrent `CREATE OR REPLACE FUNCTION`s collide), create `schema`
    /// when one is configured, and (re)define ``SQLFunctions/distance`` and
    /// ``SQLFunctions/announceCommit``.
    public static func postgresSetup(schema: String?) -> [SQLStatement] {
        let dialect = SQLDialect.postgres
        var statements = [SQLStatement(sql: "SELECT pg_advisory_xact_lock(\(setupLockKey))")]
        if let schema {
            statements.append(SQLStatement(sql: "CREATE SCHEMA IF NOT EXISTS \(dialect.quote(schema))"))
        }
        let radians = "(pi() / 180.0::float8)"
        let half = { (difference: String) in "sin(((\(difference)) * \(radians)) / 2.0::float8)" }
        statements.append(
            SQLStatement(
                sql: "CREATE OR REPLACE FUNCTION \(SQLFunctions.distance)("
                    + "lat1 double precision, lon1 double precision, lat2 double precision, lon2 double precision) "
                    + "RETURNS double precision LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$ "
                    + "SELECT 2.0::float8 * 6371.0088::float8 * asin(sqrt(least(1.0::float8, "
                    + "\(half("lat2 - lat1")) * \(half("lat2 - lat1")) "
                    + "+ cos(lat1 * \(radians)) * cos(lat2 * \(radians)) "
                    + "* \(half("lon2 - lon1")) * \(half("lon2 - lon1"))))) $$"))
        statements.append(
            SQLStatement(
                sql:
                    "CREATE OR REPLACE FUNCTION \(SQLFunctions.announceCommit)() RETURNS trigger LANGUAGE plpgsql AS $$ "
                    + "BEGIN PERFORM pg_notify('\(SQLFunctions.commitChannel)', TG_TABLE_SCHEMA || chr(31) "
                    + "|| coalesce(current_setting('\(SQLFunctions.writerSetting)', true), '') || chr(31) "
                    + "|| TG_TABLE_NAME); RETURN NULL; END $$"))
        return statements
    }

    /// Gives `table` the trigger that announces its commits, unless it has it already (a table
    /// created by an older Depot or by hand); safe against a concurrent store doing the same.
    public static func postgresAnnounceTrigger(for table: String) -> SQLStatement {
        let name = SQLDialect.postgres.quote(table)
        let literal = name.replacingOccurrences(of: "'", with: "''")
        let channel = SQLFunctions.commitChannel
        return SQLStatement(
            sql: "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = '\(literal)'::regclass "
                + "AND tgname = '\(channel)') THEN CREATE TRIGGER \(channel) AFTER INSERT OR UPDATE OR DELETE "
                + "OR TRUNCATE ON \(name) FOR EACH STATEMENT EXECUTE FUNCTION \(SQLFunctions.announceCommit)(); "
                + "END IF; EXCEPTION WHEN duplicate_object THEN NULL; END $$")
    }

    /// Names the transaction's writer as `identity`, so the announcements its writes cause are
    /// recognised (and skipped) by the store that made them.
    public static func postgresMarkWriter(_ identity: String) -> SQLStatement {
        SQLStatement(sql: "SELECT set_config('\(SQLFunctions.writerSetting)', $1, true)", arguments: [.text(identity)])
    }

    /// The connection's current schema, where its tables live.
    public static let postgresCurrentSchema = SQLStatement(sql: "SELECT current_schema()::text")

    /// Drops `schema` and everything in it.
    public static func postgresDropSchema(_ schema: String) -> SQLStatement {
        SQLStatement(sql: "DROP SCHEMA IF EXISTS \(SQLDialect.postgres.quote(schema)) CASCADE")
    }

    // MARK: - SQLite's own

    /// A count that changes whenever another connection commits to the database (SQLite).
    public static let sqliteDataVersion = SQLStatement(sql: "PRAGMA data_version")
}
