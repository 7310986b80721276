import GRDB
import Synchronization

/// The prepared statements of an engine's connections: GRDB's cache of each connection, holding
/// at most ``limit`` statement texts. Values are bound, never written into the text, but the
/// shapes of queries still vary (an `OR` of as many terms as a request sent): past the limit, the
/// connection's cache is emptied and starts again. Owned by the engine, so what it remembers
/// goes with the engine's connections.
final class SQLiteStatementCache: Sendable {
    /// The most statement texts a connection keeps prepared.
    static let limit = 256

    /// The texts each connection has cached since its cache was last emptied, by hash.
    private let cachedTexts = Mutex<[ObjectIdentifier: Set<Int>]>([:])

    /// The prepared statement for `sql` on `db`, from the connection's cache.
    func statement(_ sql: String, _ db: Database) throws -> Statement {
        let connection = ObjectIdentifier(db)
        let hash = sql.hashValue
        let isFull = cachedTexts.withLock { cached -> Bool in
            if cached[connection]?.contains(hash) == true { return false }
            if cached[connection, default: []].count >= Self.limit {
                cached[connection] = [hash]
                return true
            }
            cached[connection, default: []].insert(hash)
            return false
        }
        if isFull { db.releaseMemory() }
        return try db.cachedStatement(sql: sql)
    }
}
