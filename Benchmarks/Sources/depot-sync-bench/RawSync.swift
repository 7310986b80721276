import BenchHarness
import Depot
import DepotHTTP
import Foundation
import GRDBSQLite

// The raw baseline of a pull: the same pages through the same APIClient (the same DTO decoding),
// written with the SQLite C API, one transaction per page (its rows and the feed's cursor), as
// depot-bench's raw baselines write.

let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

final class RawDatabase {
    var handle: OpaquePointer?

    /// The columns of `airports`, in the entity's order, and which of them are `NOT NULL`.
    static let columns = ["icao", "iata", "name", "city", "subd", "country", "elevation", "lat", "lon", "tz", "lid"]

    init(path: String) {
        sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        execute("PRAGMA journal_mode = WAL")
        execute("PRAGMA synchronous = NORMAL")
        execute(
            "CREATE TABLE IF NOT EXISTS \"airports\" (\"icao\" TEXT NOT NULL, \"iata\" TEXT, \"name\" TEXT NOT NULL, "
                + "\"city\" TEXT, \"subd\" TEXT, \"country\" TEXT NOT NULL, \"elevation\" REAL NOT NULL, "
                + "\"lat\" REAL NOT NULL, \"lon\" REAL NOT NULL, \"tz\" TEXT, \"lid\" TEXT, PRIMARY KEY (\"icao\"))")
        execute(
            "CREATE TABLE IF NOT EXISTS \"feed_cursors\" (\"feed\" TEXT NOT NULL, \"cursor\" TEXT, PRIMARY KEY (\"feed\"))"
        )
    }

    deinit { sqlite3_close_v2(handle) }

    func execute(_ sql: String) {
        sqlite3_exec(handle, sql, nil, nil, nil)
    }

    func prepare(_ sql: String) -> OpaquePointer? {
        var statement: OpaquePointer?
        sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        return statement
    }

    static func bind(_ statement: OpaquePointer?, _ index: Int32, _ text: String?) {
        guard var text else {
            sqlite3_bind_null(statement, index)
            return
        }
        text.withUTF8 { bytes in
            _ = bytes.withMemoryRebound(to: CChar.self) {
                sqlite3_bind_text(statement, index, $0.baseAddress, Int32($0.count), transient)
            }
        }
    }

    static func bind(_ statement: OpaquePointer?, _ index: Int32, _ number: Double?) {
        guard let number else {
            sqlite3_bind_null(statement, index)
            return
        }
        sqlite3_bind_double(statement, index, number)
    }

    /// One page in one transaction: whole records through one prepared `INSERT`, partial ones
    /// (changes) each through an `UPDATE` of its present members, then the feed's cursor.
    func store(_ page: FeedResponse) {
        execute("BEGIN IMMEDIATE")
        let whole = page.airports.filter(\.isWhole)
        if !whole.isEmpty {
            let statement = prepare(
                "INSERT INTO \"airports\" (" + Self.columns.map { "\"\($0)\"" }.joined(separator: ", ")
                    + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
            for record in whole {
                Self.bind(statement, 1, record.icao)
                Self.bind(statement, 2, record.iata)
                Self.bind(statement, 3, record.name)
                Self.bind(statement, 4, record.city)
                Self.bind(statement, 5, record.subdivision)
                Self.bind(statement, 6, record.country)
                Self.bind(statement, 7, record.elevation)
                Self.bind(statement, 8, record.latitude)
                Self.bind(statement, 9, record.longitude)
                Self.bind(statement, 10, record.timeZone)
                Self.bind(statement, 11, record.localCode)
                sqlite3_step(statement)
                sqlite3_reset(statement)
            }
            sqlite3_finalize(statement)
        }
        for record in page.airports where !record.isWhole { update(record) }
        let cursor = prepare("INSERT OR REPLACE INTO \"feed_cursors\" (\"feed\", \"cursor\") VALUES ('airports', ?)")
        Self.bind(cursor, 1, page.cursor)
        sqlite3_step(cursor)
        sqlite3_finalize(cursor)
        execute("COMMIT")
    }

    /// `UPDATE airports SET <present members> WHERE icao = ?`.
    private func update(_ record: AirportRecord) {
        var names: [String] = []
        var values: [(OpaquePointer?, Int32) -> Void] = []
        func add(_ name: String, _ field: Field<String>) {
            guard field.isPresent else { return }
            names.append(name)
            values.append { Self.bind($0, $1, field.wrappedValue) }
        }
        func add(_ name: String, _ field: Field<Double>) {
            guard field.isPresent else { return }
            names.append(name)
            values.append { Self.bind($0, $1, field.wrappedValue) }
        }
        add("iata", record.$iata)
        add("name", record.$name)
        add("city", record.$city)
        add("subd", record.$subdivision)
        add("country", record.$country)
        add("elevation", record.$elevation)
        add("lat", record.$latitude)
        add("lon", record.$longitude)
        add("tz", record.$timeZone)
        add("lid", record.$localCode)
        guard !names.isEmpty else { return }
        let statement = prepare(
            "UPDATE \"airports\" SET " + names.map { "\"\($0)\" = ?" }.joined(separator: ", ")
                + " WHERE \"icao\" = ?")
        for (index, bind) in values.enumerated() { bind(statement, Int32(index + 1)) }
        Self.bind(statement, Int32(values.count + 1), record.icao)
        sqlite3_step(statement)
        sqlite3_finalize(statement)
    }

    /// Pulls the feed from `cursor` until a page says no more follows, each page in its own
    /// transaction. Returns the cursor to go on from.
    nonisolated(nonsending) func pull(from cursor: String?, client: APIClient, pageSize: Int) async throws -> String? {
        var cursor = cursor
        while true {
            let page = try await client.send(FeedRequest(cursor: cursor, limit: pageSize))
            store(page)
            cursor = page.cursor
            if !page.more { return cursor }
        }
    }

    /// The rows of `airports`.
    func count() -> Int {
        let statement = prepare("SELECT COUNT(*) FROM \"airports\"")
        sqlite3_step(statement)
        let count = Int(sqlite3_column_int64(statement, 0))
        sqlite3_finalize(statement)
        return count
    }

    /// The name of the airport `icao`.
    func name(of icao: String) -> String? {
        let statement = prepare("SELECT \"name\" FROM \"airports\" WHERE \"icao\" = ?")
        Self.bind(statement, 1, icao)
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW, let text = sqlite3_column_text(statement, 0) else { return nil }
        return String(cString: text)
    }
}

extension AirportRecord {
    /// Whether every member is present (a copy's record, not a change).
    var isWhole: Bool {
        $iata.isPresent && $name.isPresent && $city.isPresent && $subdivision.isPresent && $country.isPresent
            && $elevation.isPresent && $latitude.isPresent && $longitude.isPresent && $timeZone.isPresent
            && $localCode.isPresent
    }
}
