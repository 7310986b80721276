import Depot
import DepotSQL
import Logging
import PostgresNIO

/// The statements a PostgreSQL connection runs for Depot.
enum PostgresOperations {
    static let logger: Logger = {
        var logger = Logger(label: "depot.postgres")
        logger.logLevel = .critical
        return logger
    }()

    /// `depot_distance(lat0, lon0, lat, lon)`: haversine kilometres with exactly the operations of
    /// ``GeoDistance/haversineKilometers(latitude1:longitude1:latitude2:longitude2:)``, in the same
    /// order, so distance order agrees with the other stores bit for bit. NULL without coordinates.
    static let distanceFunction = """
        CREATE OR REPLACE FUNCTION depot_distance(\
        lat1 double precision, lon1 double precision, lat2 double precision, lon2 double precision) \
        RETURNS double precision LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$ \
        SELECT 2.0::float8 * 6371.0088::float8 * asin(sqrt(least(1.0::float8, \
        sin(((lat2 - lat1) * (pi() / 180.0::float8)) / 2.0::float8) \
        * sin(((lat2 - lat1) * (pi() / 180.0::float8)) / 2.0::float8) \
        + cos(lat1 * (pi() / 180.0::float8)) * cos(lat2 * (pi() / 180.0::float8)) \
        * sin(((lon2 - lon1) * (pi() / 180.0::float8)) / 2.0::float8) \
        * sin(((lon2 - lon1) * (pi() / 180.0::float8)) / 2.0::float8)))) $$
        """

    /// Runs a statement and reads (discards) whatever rows it returns.
    static func run(_ sql: String, on connection: PostgresConnection) async throws {
        try await run(PostgresQuery(unsafeSQL: sql), on: connection)
    }

    static func run(_ query: PostgresQuery, on connection: PostgresConnection) async throws {
        let rows = try await connection.query(query, logger: logger)
        for try await _ in rows {}
    }

    /// Runs a statement and returns how many rows it affected (its command tag's count).
    static func affectedRows(_ query: PostgresQuery, on connection: PostgresConnection) async throws -> Int {
        let metadata = try await connection.query(query, logger: logger, { _ in }).get()
        return metadata.rows ?? 0
    }

    /// The channel commits are announced on.
    static let channel = "depot_commits"

    /// `depot_announce_commit()`: the statement-level trigger function every Depot table carries.
    /// It notifies ``channel`` with `schema ␟ writer ␟ table`, where `writer` is the identity a
    /// Depot store sets for its transaction (``markWriter(_:on:)``) and empty for anyone else
    /// (`psql`, another program). PostgreSQL delivers it when the transaction commits, once per
    /// distinct payload, and never for a rolled-back one.
    static let announceFunction = """
        CREATE OR REPLACE FUNCTION depot_announce_commit() RETURNS trigger LANGUAGE plpgsql AS $$ \
        BEGIN \
        PERFORM pg_notify('\(channel)', TG_TABLE_SCHEMA || chr(31) \
        || coalesce(current_setting('depot.writer', true), '') || chr(31) || TG_TABLE_NAME); \
        RETURN NULL; \
        END $$
        """

    /// Gives `table` the trigger that announces its commits, unless it has it already (a table
    /// created by an older Depot or by hand). Safe against a concurrent store doing the same.
    static func announceTrigger(for table: String) -> String {
        let name = SQLDialect.postgres.quote(table)
        let literal = name.replacingOccurrences(of: "'", with: "''")
        return """
            DO $$ BEGIN \
            IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = '\(literal)'::regclass \
            AND tgname = '\(channel)') THEN \
            CREATE TRIGGER \(channel) AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON \(name) \
            FOR EACH STATEMENT EXECUTE FUNCTION depot_announce_commit(); \
            END IF; \
            EXCEPTION WHEN duplicate_object THEN NULL; \
            END $$
            """
    }

    /// Names this connection's transaction as `identity`'s, so the announcements its writes cause
    /// are recognised (and skipped) by the store that made them.
    static func markWriter(_ identity: String, on connection: PostgresConnection) async throws {
        var binds = PostgresBindings(capacity: 1)
        binds.append(identity)
        try await run(
            PostgresQuery(unsafeSQL: "SELECT set_config('depot.writer', $1, true)", binds: binds), on: connection)
    }

    /// Separates the fields of a `NOTIFY` payload (the ASCII unit separator).
    static let separator: Character = "\u{1F}"

    /// The connection's current schema (where its tables live).
    static func currentSchema(on connection: PostgresConnection) async throws -> String {
        let rows = try await connection.query("SELECT current_schema()::text", logger: logger)
        var schema = ""
        for try await name in rows.decode(String.self) { schema = name }
        return schema
    }

    /// A rendered statement with its arguments bound.
    static func query(_ statement: SQLStatement) -> PostgresQuery {
        var binds = PostgresBindings(capacity: statement.arguments.count)
        for argument in statement.arguments {
            if case .null = argument {
                binds.appendNull()
            } else {
                binds.append(PostgresParameter(value: argument))
            }
        }
        return PostgresQuery(unsafeSQL: statement.sql, binds: binds)
    }

    /// Runs a rendered `SELECT`, receives every row, then hands them to `read` through a cursor.
    static func scan<Result>(
        _ statement: SQLStatement, table: TableDescription, on connection: PostgresConnection,
        _ read: (inout any StoreCursor) throws -> Result
    ) async throws -> Result {
        var rows: [PostgresRow] = []
        for try await row in try await connection.query(query(statement), logger: logger) {
            rows.append(row)
        }
        var cursor: any StoreCursor = PostgresRowCursor(rows: rows, width: table.columns.count)
        return try read(&cursor)
    }

    /// Runs a statement returning one integer (a `COUNT(*)`).
    static func count(
        _ statement: SQLStatement, on connection: PostgresConnection
    ) async throws -> Int {
        let rows = try await connection.query(query(statement), logger: logger)
        var count = 0
        for try await row in rows {
            if let cell = row.first, case .integer(let number) = try PostgresWire.read(cell) {
                count = Int(number)
            }
        }
        return count
    }
}

/// Received rows, decoded one row at a time as the cursor reaches it.
struct PostgresRowCursor: StoreCursor {
    let rows: [PostgresRow]
    var index = -1
    var values: [StoredValue]

    init(rows: [PostgresRow], width: Int) {
        self.rows = rows
        self.values = [StoredValue](repeating: .null, count: width)
    }

    mutating func next() throws -> Bool {
        guard index + 1 < rows.count else {
            index = rows.count
            return false
        }
        index += 1
        var column = 0
        for cell in rows[index] {
            values[column] = try PostgresWire.read(cell)
            column += 1
        }
        return true
    }

    func value(at column: Int) -> StoredValue { values[column] }
}
