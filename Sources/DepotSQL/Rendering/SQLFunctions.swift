import Depot

/// The names of what Depot installs in a database, each written once: the functions and the
/// collation statements call, the change-announcement channel, and the helper columns.
///
/// SQLite registers the functions on every connection (in Swift); PostgreSQL gets them from
/// ``SQLRenderer/postgresSetup(schema:)``.
public enum SQLFunctions {
    /// `depot_fold(text)`: `TextFolding.fold(_:)` of a text, for case-insensitive matching. SQLite
    /// registers the Swift function; PostgreSQL gets one SQL expression built from
    /// `TextFolding.caseFolding` (``SQLRenderer/postgresFoldFunction``), so rows written by any
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

extension SQLRenderer {
    // MARK: - What Depot installs (PostgreSQL)

    /// The statements that make a PostgreSQL database ready for Depot, run in one transaction:
    /// take the setup lock (concurrent `CREATE OR REPLACE FUNCTION`s collide), create `schema`
    /// when one is configured, (re)define ``SQLFunctions/fold``, ``SQLFunctions/distance`` and
    /// ``SQLFunctions/announceCommit``, and mark each with ``postgresSetupVersion``.
    ///
    /// A store runs them only when ``postgresSetupCheck`` finds a function missing or of another
    /// version, so reads on a database Depot has set up never write.
    public static func postgresSetup(schema: String?) -> [SQLStatement] {
        let dialect = PostgresDialect()
        var statements = [SQLStatement(sql: "SELECT pg_advisory_xact_lock(\(setupLockKey))")]
        if let schema {
            statements.append(SQLStatement(sql: "CREATE SCHEMA IF NOT EXISTS \(dialect.quote(schema))"))
        }
        statements += postgresFunctions.map { SQLStatement(sql: $0.definition) }
        statements += postgresFunctions.map {
            SQLStatement(sql: "COMMENT ON FUNCTION \($0.signature) IS '\(postgresSetupVersion)'")
        }
        return statements
    }

    /// Counts Depot's functions of this version (``postgresSetupVersion``) in the connection's
    /// current schema: ``postgresSetupFunctionCount`` when the database is ready.
    public static let postgresSetupCheck = SQLStatement(
        sql: "SELECT count(*) FROM pg_proc WHERE pronamespace = "
            + "(SELECT oid FROM pg_namespace WHERE nspname = current_schema()) "
            + "AND proname IN (\(postgresFunctions.map { "'\($0.name)'" }.joined(separator: ", "))) "
            + "AND obj_description(oid, 'pg_proc') = $1",
        arguments: [.text(postgresSetupVersion)])

    /// How many functions ``postgresSetupCheck`` counts in a ready database.
    public static var postgresSetupFunctionCount: Int { postgresFunctions.count }

    /// The mark Depot's PostgreSQL functions carry (as their comment): a hash of their definitions,
    /// so a database set up by a Depot whose functions differ is set up again.
    public static let postgresSetupVersion: String = {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a, 64 bits
        for byte in postgresFunctions.map(\.definition).joined(separator: "\n").utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return "depot " + String(hash, radix: 16)
    }()

    /// Each function Depot installs in PostgreSQL: its name, its signature (for `COMMENT ON`) and
    /// its definition.
    static let postgresFunctions: [(name: String, signature: String, definition: String)] = [
        (SQLFunctions.fold, "\(SQLFunctions.fold)(text)", postgresFoldFunction),
        (SQLFunctions.foldDiacritics, "\(SQLFunctions.foldDiacritics)(text)", postgresFoldDiacriticsFunction),
        (SQLFunctions.words, "\(SQLFunctions.words)(text)", postgresWordsFunction),
        (
            SQLFunctions.distance,
            "\(SQLFunctions.distance)(double precision, double precision, double precision, double precision)",
            postgresDistanceFunction
        ),
        (SQLFunctions.announceCommit, "\(SQLFunctions.announceCommit)()", postgresAnnounceFunction),
    ]

    /// `depot_fold(text)` for PostgreSQL: `TextFolding.fold(_:)` as one inlinable SQL expression.
    ///
    /// ASCII text is lowered A–Z only (`lower(t COLLATE "C")`); other text is composed
    /// (`normalize(t, NFC)`), its scalars that fold to several (status F: "ß" → "ss") replaced one
    /// by one, those that fold to one (status C) mapped by a single `translate`, and the result
    /// composed again, exactly as the Swift function does. Both come from
    /// `TextFolding.caseFolding`, and a test compares them over every Unicode scalar.
    public static var postgresFoldFunction: String {
        "CREATE OR REPLACE FUNCTION \(SQLFunctions.fold)(t text) RETURNS text LANGUAGE sql IMMUTABLE "
            + "PARALLEL SAFE AS $$ SELECT \(postgresFold("t")) $$"
    }

    /// The folding of `depot_fold`, as an expression over `text`. Depot's functions inline it
    /// rather than call `depot_fold`: a function called from another resolves through the
    /// *caller's* `search_path`, and a client whose path does not hold Depot's schema (psql's
    /// default) could then not write a searchable table.
    static func postgresFold(_ text: String) -> String {
        "(CASE WHEN octet_length(\(text)) = char_length(\(text)) THEN lower(\(text) COLLATE \"C\") "
            + "ELSE normalize(\(postgresFoldTranslation.replacingOccurrences(of: "\u{1}", with: text)), NFC) END)"
    }

    /// The replacements and translation of case folding over a placeholder (U+0001) for the text.
    private static let postgresFoldTranslation: String = {
        let several = TextFolding.caseFolding.filter { $0.folded.unicodeScalars.count > 1 }
        let one = TextFolding.caseFolding.filter { $0.folded.unicodeScalars.count == 1 }
        // The table holds neither quotes nor backslashes; escape quotes all the same.
        func literal(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }
        var expression = "normalize(\u{1}, NFC)"
        for entry in several {
            expression = "replace(\(expression), \(literal(String(entry.scalar))), \(literal(entry.folded)))"
        }
        var from = String.UnicodeScalarView()
        var to = String.UnicodeScalarView()
        for entry in one {
            from.append(entry.scalar)
            to.append(contentsOf: entry.folded.unicodeScalars)
        }
        return "translate(\(expression), \(literal(String(from))), \(literal(String(to))))"
    }()

    /// `depot_fold_diacritics(text)` for PostgreSQL: ``postgresFoldFunction``'s folding, then one
    /// `translate` mapping each letter with diacritics to its base letter and deleting combining
    /// marks, both from `TextFolding.diacritics`, as the Swift function does.
    public static let postgresFoldDiacriticsFunction: String = {
        func literal(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }
        var from = String.UnicodeScalarView()
        var to = String.UnicodeScalarView()
        for (scalar, base) in TextFolding.diacritics.mapped {
            from.append(scalar)
            to.append(base)
        }
        // translate deletes the characters of `from` that have none in `to`: the marks come last.
        for mark in TextFolding.diacritics.removed { from.append(mark) }
        return "CREATE OR REPLACE FUNCTION \(SQLFunctions.foldDiacritics)(t text) RETURNS text LANGUAGE sql "
            + "IMMUTABLE PARALLEL SAFE AS $$ SELECT translate(\(postgresFold("t")), \(literal(String(from))), "
            + "\(literal(String(to)))) $$"
    }()

    static var postgresDistanceFunction: String {
        let radians = "(pi() / 180.0::float8)"
        let half = { (difference: String) in "sin(((\(difference)) * \(radians)) / 2.0::float8)" }
        return "CREATE OR REPLACE FUNCTION \(SQLFunctions.distance)("
            + "lat1 double precision, lon1 double precision, lat2 double precision, lon2 double precision) "
            + "RETURNS double precision LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$ "
            + "SELECT 2.0::float8 * 6371.0088::float8 * asin(sqrt(least(1.0::float8, "
            + "\(half("lat2 - lat1")) * \(half("lat2 - lat1")) "
            + "+ cos(lat1 * \(radians)) * cos(lat2 * \(radians)) "
            + "* \(half("lon2 - lon1")) * \(half("lon2 - lon1"))))) $$"
    }

    static var postgresAnnounceFunction: String {
        "CREATE OR REPLACE FUNCTION \(SQLFunctions.announceCommit)() RETURNS trigger LANGUAGE plpgsql AS $$ "
            + "BEGIN PERFORM pg_notify('\(SQLFunctions.commitChannel)', TG_TABLE_SCHEMA || chr(31) "
            + "|| coalesce(current_setting('\(SQLFunctions.writerSetting)', true), '') || chr(31) "
            + "|| TG_TABLE_NAME); RETURN NULL; END $$"
    }

    /// Gives `table` the trigger that announces its commits, unless it has it already (a table
    /// created by an older Depot or by hand); safe against a concurrent store doing the same.
    public static func postgresAnnounceTrigger(for table: String) -> SQLStatement {
        let name = PostgresDialect().quote(table)
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

    /// Drops `schema` and everything in it.
    public static func postgresDropSchema(_ schema: String) -> SQLStatement {
        SQLStatement(sql: "DROP SCHEMA IF EXISTS \(PostgresDialect().quote(schema)) CASCADE")
    }

    // MARK: - SQLite's own

    /// A count that changes whenever another connection commits to the database (SQLite).
    public static let sqliteDataVersion = SQLStatement(sql: "PRAGMA data_version")
}
