/// The one error type Depot throws.
///
/// Every error has a ``kind`` to switch on, a ``message`` that names what was involved (entity,
/// column, key, value kind, path), and, where one exists, the ``underlying`` error from the engine.
///
/// ```swift
/// do {
///     try await airports.insert(oslo)
/// } catch let error as DepotError where error.kind == .constraintViolation {
///     print(error.message)  // "airports: a row with key 'ENGM' already exists"
/// }
/// ```
///
/// Bound values are never printed; keys are, because they identify rows.
public struct DepotError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is. New kinds may be added without breaking callers.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        let name: String
        /// The kind's name, as messages show it: `constraint violation`, `schema mismatch`.
        public var description: String { name }

        /// A schema declaration is invalid (identifier, duplicate column, primary key).
        public static let invalidSchema = Kind(name: "invalid schema")
        /// The stored schema does not match what the entity declares.
        public static let schemaMismatch = Kind(name: "schema mismatch")
        /// A unique, primary-key, NOT NULL or foreign-key rule rejected a write.
        public static let constraintViolation = Kind(name: "constraint violation")
        /// A stored value cannot become the Swift type it should decode into.
        public static let decodingFailed = Kind(name: "decoding failed")
        /// A Swift value cannot become the value it should be stored as (a ``StorableAsJSON``
        /// type whose own `encode(to:)` throws).
        public static let encodingFailed = Kind(name: "encoding failed")
        /// A query or argument is invalid (for example a wrong key arity).
        public static let invalidQuery = Kind(name: "invalid query")
        /// A write lacks columns it needs (for example a patch that would create a row).
        public static let missingColumns = Kind(name: "missing columns")
        /// A mapper rejected its input.
        public static let mappingFailed = Kind(name: "mapping failed")
        /// A transaction was used after it ended, or could not commit.
        public static let transaction = Kind(name: "transaction")
        /// The storage could not be opened, read or written (file, server, connection).
        public static let storage = Kind(name: "storage")
        /// The connection to a database server failed or was lost.
        public static let connection = Kind(name: "connection")
        /// A computed value does not fit its type (a sum of integer values beyond Int64).
        public static let overflow = Kind(name: "overflow")
    }

    /// What kind of failure this is.
    public var kind: Kind
    /// A human-readable message naming entity, column, key and what was wrong.
    public var message: String
    /// The table involved, if any.
    public var table: String?
    /// The column involved, if any.
    public var column: String?
    /// The error reported by the engine or mapper, if any.
    public var underlying: (any Error)?

    /// An error of `kind` with `message`: what stores, mappers and custom conversions throw.
    ///
    /// ```swift
    /// throw DepotError(.invalidQuery, "airports: limit must not be negative (got -1)", table: "airports")
    /// ```
    ///
    /// - Parameters:
    ///   - kind: What kind of failure it is; callers switch on it.
    ///   - message: What happened, naming entity, column and key; never bound values.
    ///   - table: The table involved, if any.
    ///   - column: The column involved, if any.
    ///   - underlying: The engine's or mapper's own error, if any.
    public init(
        _ kind: Kind, _ message: String, table: String? = nil, column: String? = nil,
        underlying: (any Error)? = nil
    ) {
        self.kind = kind
        self.message = message
        self.table = table
        self.column = column
        self.underlying = underlying
    }

    /// `DepotError(kind): message`, followed by the underlying error in brackets when there is one.
    public var description: String {
        var text = "DepotError(\(kind)): \(message)"
        if let underlying { text += " [\(underlying)]" }
        return text
    }
}

extension DepotError {
    /// What a store throws when a task that is inside one of its transactions asks it for
    /// another: `store.write` (or a repository taken from the store rather than from `tx`) inside
    /// `store.write { tx in … }`. Transactions run one at a time, so the inner one would wait for
    /// the outer one to end, forever.
    ///
    /// ```swift
    /// try await store.write { tx in
    ///     try await store.repository(Airport.self).upsert(oslo)  // throws this error
    ///     try await tx.repository(Airport.self).upsert(oslo)     // what was meant
    /// }
    /// ```
    public static let transactionInsideTransaction = DepotError(
        .transaction,
        "a write through the store was started inside one of its own transactions, where it would wait "
            + "forever for that transaction to end: inside store.write { tx in … }, write through "
            + "tx.repository(…), not store.repository(…) or store.write")
}
