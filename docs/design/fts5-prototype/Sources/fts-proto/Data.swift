import CFTS
import DepotText
import Foundation

/// One airport row: the columns of the bundled CSV.
struct Airport {
    var icao: String
    var iata: String?
    var name: String
    var city: String?
    var subd: String?
    var country: String
    var elevation: Double
    var lat: Double
    var lon: Double
    var tz: String?
    var lid: String?
}

let columns = ["icao", "iata", "name", "city", "subd", "country", "elevation", "lat", "lon", "tz", "lid"]
let createTable =
    "CREATE TABLE \"airports\" (\"icao\" TEXT NOT NULL, \"iata\" TEXT, \"name\" TEXT NOT NULL, \"city\" TEXT, "
    + "\"subd\" TEXT, \"country\" TEXT NOT NULL, \"elevation\" REAL NOT NULL, \"lat\" REAL NOT NULL, "
    + "\"lon\" REAL NOT NULL, \"tz\" TEXT, \"lid\" TEXT, PRIMARY KEY (\"icao\"))"
let insertRow = "INSERT INTO \"airports\" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"

/// Parses RFC 4180 CSV (quoted fields, doubled quotes).
func parseCSV(_ text: String) -> [[String]] {
    var rows: [[String]] = []
    var row: [String] = []
    var field = ""
    var quoted = false
    var iterator = text.unicodeScalars.makeIterator()
    var pending: Unicode.Scalar? = nil
    while let c = pending ?? iterator.next() {
        pending = nil
        if quoted {
            if c == "\"" {
                if let next = iterator.next() {
                    if next == "\"" { field.unicodeScalars.append("\"") } else { quoted = false; pending = next }
                } else { quoted = false }
            } else { field.unicodeScalars.append(c) }
        } else if c == "\"" {
            quoted = true
        } else if c == "," {
            row.append(field); field = ""
        } else if c == "\n" {
            row.append(field); field = ""
            rows.append(row); row = []
        } else if c != "\r" {
            field.unicodeScalars.append(c)
        }
    }
    if !field.isEmpty || !row.isEmpty { row.append(field); rows.append(row) }
    return rows
}

func loadAirports() -> [Airport] {
    let path = "/work/main/Sources/AirportsExample/Resources/airports.csv"
    let text = try! String(contentsOfFile: path, encoding: .utf8)
    let rows = parseCSV(text)
    precondition(rows[0] == columns, "header \(rows[0])")
    func optional(_ s: String) -> String? { s.isEmpty ? nil : s }
    return rows.dropFirst().map { f in
        Airport(
            icao: f[0], iata: optional(f[1]), name: f[2], city: optional(f[3]), subd: optional(f[4]), country: f[5],
            elevation: Double(f[6]) ?? 0, lat: Double(f[7]) ?? 0, lon: Double(f[8]) ?? 0, tz: optional(f[9]),
            lid: optional(f[10]))
    }
}

struct SplitMix64 {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) * 2 - 1 }
}

/// `count` rows as depot-bench's GeoCases makes them: the airports, then copies with distinct
/// keys (`ENGM_1`, …) moved by up to 1° (clamped rather than reflected: search does not care).
func replicate(_ base: [Airport], count: Int) -> [Airport] {
    var generator = SplitMix64(state: 27)
    var rows: [Airport] = []
    rows.reserveCapacity(count)
    var copy = 0
    while rows.count < count {
        for airport in base where rows.count < count {
            var row = airport
            if copy > 0 {
                row.icao += "_\(copy)"
                row.lat = min(90, max(-90, row.lat + generator.unit()))
                row.lon = min(180, max(-180, row.lon + generator.unit()))
            }
            rows.append(row)
        }
        copy += 1
    }
    return rows
}

/// Inserts `rows`; with `alsoInto`, each row's name also goes into that FTS5 table by a second
/// one-row statement (no triggers: the writer keeps the index itself).
func insert(_ rows: [Airport], into db: DB, alsoInto fts: String? = nil) {
    let statement = db.prepare(insertRow)
    let ftsStatement = fts.map { db.prepare("INSERT INTO \"\($0)\" (rowid, \"name\") VALUES (last_insert_rowid(), ?)") }
    defer { sqlite3_finalize(statement); if let ftsStatement { sqlite3_finalize(ftsStatement) } }
    for row in rows {
        defer {
            if let ftsStatement {
                bind(ftsStatement, 1, row.name)
                if sqlite3_step(ftsStatement) != SQLITE_DONE { fatalError("fts: \(String(cString: sqlite3_errmsg(db.handle)))") }
                sqlite3_reset(ftsStatement)
            }
        }
        bind(statement, 1, row.icao)
        bind(statement, 2, row.iata)
        bind(statement, 3, row.name)
        bind(statement, 4, row.city)
        bind(statement, 5, row.subd)
        bind(statement, 6, row.country)
        sqlite3_bind_double(statement, 7, row.elevation)
        sqlite3_bind_double(statement, 8, row.lat)
        sqlite3_bind_double(statement, 9, row.lon)
        bind(statement, 10, row.tz)
        bind(statement, 11, row.lid)
        let code = sqlite3_step(statement)
        if code != SQLITE_DONE { fatalError("insert: \(String(cString: sqlite3_errmsg(db.handle)))") }
        sqlite3_reset(statement)
    }
}

/// TextSearch's definition over the rows, computed once per distinct name (as depot-bench's
/// SearchCases.Reference): the matches of a query, and the best of them by `.relevance`.
struct Reference {
    let rows: [Airport]
    let nameOf: [Int]
    let words: [[String]]
    let lengths: [Int]

    init(_ rows: [Airport]) {
        var numbers: [String: Int] = [:]
        var words: [[String]] = []
        var lengths: [Int] = []
        self.nameOf = rows.map { row in
            if let number = numbers[row.name] { return number }
            numbers[row.name] = words.count
            words.append(TextSearch.words(of: row.name))
            lengths.append(row.name.unicodeScalars.count)
            return words.count - 1
        }
        self.rows = rows
        self.words = words
        self.lengths = lengths
    }

    func matches(_ tokens: [String], _ matching: TextMatching = .caseInsensitive) -> [Int] {
        let matching = words.map { words in
            let words = matching == .caseAndDiacriticInsensitive ? words.map(TextFolding.foldIgnoringDiacritics) : words
            return tokens.allSatisfy { token in words.contains { TextFolding.hasPrefixBytes($0, token) } }
        }
        return rows.indices.filter { matching[nameOf[$0]] }
    }

    func best(_ matched: [Int], _ tokens: [String], limit: Int) -> [String] {
        let wanted = Set(tokens)
        let exact = words.map { $0.filter(wanted.contains).count }
        func rank(_ row: Int) -> Int { -exact[nameOf[row]] * 100_000 + lengths[nameOf[row]] }
        return matched.sorted { left, right in
            let (leftRank, rightRank) = (rank(left), rank(right))
            if leftRank != rightRank { return leftRank < rightRank }
            return rows[left].icao.utf8.lexicographicallyPrecedes(rows[right].icao.utf8)
        }.prefix(limit).map { rows[$0].icao }
    }
}

func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e6 }

func measure(_ body: () -> Void) -> Double {
    let start = now()
    body()
    return now() - start
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
}

func fmt(_ ms: Double) -> String {
    ms >= 100 ? String(format: "%.0f", ms) : ms >= 10 ? String(format: "%.1f", ms) : String(format: "%.2f", ms)
}
