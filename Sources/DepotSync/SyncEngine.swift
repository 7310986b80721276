import Depot
import DepotHTTP
import Foundation
import Synchronization

/// Keeps a local store and your API in step, offline first: local edits of synced entities go to
/// an outbox in the same transaction and are pushed in order; each entity's change feed is pulled
/// from a cursor stored with the rows it brought.
///
/// ```swift
/// let engine = SyncEngine(store: store, client: APIClient(baseURL: api), entities: [
///     .entity(Airport.self, feed: AirportsFeed(), push: AirportsPush(), conflicts: .lastWriterWins)
/// ])
/// let airports = engine.store.repository(Airport.self)     // the ordinary repository API
/// try await airports.update(where: \.icao == "ENGM", set: [.set(\.name, to: "Oslo Gardermoen")])
/// // offline: the edit is stored and waits in the outbox
/// let report = try await engine.sync()                     // push the outbox, then pull the feeds
/// ```
///
/// Feeds are pulled parents first (an entity after the synced entities its `ToOne` keys
/// reference), and the rows they bring are stored without checking those keys locally: the server
/// enforced its relations, and a parent may come with the next sync or lie outside what this
/// replica receives. Local edits are checked as usual and pushed in the order they were made.
///
/// One sync runs at a time (a second call waits for the first). A sync that fails (the network,
/// a 5xx after the client's retries) throws after keeping everything it got: pushed edits are out
/// of the outbox, pulled pages and their cursor are stored; the next sync goes on from there.
public final class SyncEngine: Sendable {
    /// The store to read and write through: writes to synced entities are recorded in the outbox.
    public let store: SyncedStore
    /// The client that talks to the API; `nil` for an engine that only records edits (an offline
    /// command-line edit), whose syncs throw.
    public let client: APIClient?
    let entities: [String: any SyncedEntityBox]
    let order: [any SyncedEntityBox]
    let clock: @Sendable () -> Date
    let lock = AsyncLock()
    let state = Mutex(EngineState())
    /// Told each time the engine's state changes (what ``statusUpdates()`` re-reads on).
    let stateChanges = Broadcaster<Void>(buffering: 1)

    struct EngineState {
        var isSyncing = false
        var lastPull: Date?
        var lastPush: Date?
        var lastError: String?
        /// Pull transactions begun, by table: a resource refresh whose request went out before one
        /// began may hold older rows than it stored (``pullsBegun(into:)``).
        var pullsBegun: [String: Int] = [:]
    }

    /// How many pull transactions have begun writing into `table` so far.
    func pullsBegun(into table: String) -> Int { state.withLock { $0.pullsBegun[table, default: 0] } }

    /// An engine syncing `entities` between `store` and the API `client` talks to.
    ///
    /// - Parameters:
    ///   - store: The local store (every entity's table and the sync tables live there).
    ///   - client: The API's client; `nil` records edits and answers what is pending, and syncs
    ///     throw (`DepotError` of kind `.connection`).
    ///   - entities: The entities that sync, each with its feed, push and conflict policy.
    ///   - clock: The local clock (edit times, pull times); the system's by default.
    public init(
        store: any Store, client: APIClient?, entities: [SyncedEntity],
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        let boxes = entities.map(\.box)
        self.order = Self.parentsFirst(boxes)
        self.entities = Dictionary(boxes.map { ($0.table.name, $0) }) { first, _ in first }
        self.client = client
        self.clock = clock
        self.store = SyncedStore(base: store, synced: Set(boxes.map(\.table.name)), clock: clock)
    }

    /// `entities` with every entity after the synced entities its ``ToOne`` keys reference, in
    /// declaration order otherwise (a cycle keeps it): what pulls follow, so that a page's rows
    /// find the parents pulled before them.
    static func parentsFirst(_ entities: [any SyncedEntityBox]) -> [any SyncedEntityBox] {
        let synced = Set(entities.map(\.table.name))
        var placed = Set<String>()
        var waiting = entities
        var order: [any SyncedEntityBox] = []
        while !waiting.isEmpty {
            let ready =
                waiting.firstIndex { $0.parentTables.intersection(synced).isSubset(of: placed) } ?? waiting.startIndex
            let next = waiting.remove(at: ready)
            placed.insert(next.table.name)
            order.append(next)
        }
        return order
    }

    /// The store underneath: writes through it are not recorded (what the engine itself uses).
    public var base: any Store { store.base }

    // MARK: - Sync

    /// Pushes the outbox, then pulls every feed.
    ///
    /// - Returns: What was pushed, resolved, rejected and pulled.
    /// - Throws: The first error that stopped the push or a pull (an `HTTPError` of the network
    ///   or the server, a `DepotError` of the store); what was done before it stays done.
    @discardableResult
    public func sync() async throws -> SyncReport {
        try await running {
            var report = SyncReport()
            // A push that fails (the network, a server error on one change) does not keep the feeds
            // from being pulled: the error is thrown once they are.
            var pushError: (any Error)?
            do {
                try await pushOutbox(into: &report)
            } catch {
                pushError = error
            }
            for entity in order { try await pull(entity, into: &report) }
            if let pushError { throw pushError }
            return report
        }
    }

    /// Pushes the outbox only.
    @discardableResult
    public func push() async throws -> SyncReport {
        try await running {
            var report = SyncReport()
            try await pushOutbox(into: &report)
            return report
        }
    }

    /// Pulls every feed only.
    @discardableResult
    public func pull() async throws -> SyncReport {
        try await running {
            var report = SyncReport()
            for entity in order { try await pull(entity, into: &report) }
            return report
        }
    }

    private func running(_ body: () async throws -> SyncReport) async throws -> SyncReport {
        guard client != nil else {
            throw DepotError(.connection, "this sync engine has no API client: it records edits but cannot sync")
        }
        return try await lock.withLock {
            update { $0.isSyncing = true }
            do {
                let report = try await body()
                update {
                    $0.isSyncing = false
                    $0.lastError = nil
                }
                return report
            } catch {
                update {
                    $0.isSyncing = false
                    $0.lastError = "\(error)"
                }
                throw error
            }
        }
    }

    private func api() throws -> APIClient {
        guard let client else {
            throw DepotError(.connection, "this sync engine has no API client: it records edits but cannot sync")
        }
        return client
    }

    // MARK: - Pull

    /// Pulls one feed to its end, carrying out what its ``PullMachine`` decides.
    private func pull(_ entity: any SyncedEntityBox, into report: inout SyncReport) async throws {
        let feed = entity.feedName
        let table = entity.table
        var machine = PullMachine(feed: feed, table: table.name)
        var stored = try await base.repository(FeedCursor.self).find(feed)
        var action = machine.start(stored: stored)
        var page: ErasedPage?
        while true {
            switch action {
            case .fetch(let cursor):
                let fetched = try await entity.fetchPage(after: cursor, client: try api())
                report.requests += 1
                page = fetched
                action = try machine.received(
                    .init(cursor: fetched.cursor, hasMore: fetched.hasMore, isExpired: fetched.isExpired))
            case .restartCopy:
                report.fullCopies += 1
                let restarted = FeedCursor(feed: feed, cursor: nil, copyMode: .none, pulledAt: stored?.pulledAt)
                _ = try await base.write { tx in try await tx.repository(FeedCursor.self).upsert(restarted) }
                stored = restarted
                action = machine.restarted()
            case .store(let plan):
                guard let received = page else { return }
                let now = clock()
                let mode = try await store(received, of: entity, plan: plan, at: now)
                stored = FeedCursor(feed: feed, cursor: received.cursor, copyMode: mode, pulledAt: now)
                report.pulledRows += received.keys.count
                report.pulledDeletions += received.deletions.count
                update { $0.lastPull = now }
                action = machine.stored(mode: mode)
            case .finished:
                return
            }
        }
    }

    /// Stores a pulled page, its copy bookkeeping and its cursor in one transaction; returns the
    /// copy mode stored with the cursor.
    private func store(_ page: ErasedPage, of entity: any SyncedEntityBox, plan: PullMachine.StorePlan, at now: Date)
        async throws -> FeedCursor.CopyMode
    {
        let feed = entity.feedName
        let table = entity.table
        return try await base.transaction { writer in
            // Counted before anything is written: a refresh that checks at the end of its own
            // transaction sees every pull that could have written before it commits.
            self.state.withLock { $0.pullsBegun[table.name, default: 0] += 1 }
            let tx = Transaction(writer: writer)
            var mode = plan.mode
            if plan.beginsCopy {
                let empty = try await writer.count(SelectQuery(table: table, limit: 1)) == 0
                mode = .beginning(tableIsEmpty: empty)
                _ = try await tx.repository(SeenKey.self).remove(where: \.feed == feed)
            }
            try await entity.store(page, in: writer)
            if let versions = page.versions {
                guard versions.count == page.keys.count else {
                    throw DepotError(
                        .mappingFailed,
                        "the feed \(feed) sent \(versions.count) versions for \(page.keys.count) rows; the page is "
                            + "not stored", table: table.name)
                }
                try await RowVersion.store(
                    table.name, keys: try page.keys.map(SyncJSON.keyText), versions: versions, in: writer)
            }
            try await RowVersion.store(
                table.name, keys: try page.deletions.map(SyncJSON.keyText), versions: nil, in: writer)
            if mode.tracksKeys, !page.keys.isEmpty {
                try await tx.repository(SeenKey.self).upsert(
                    try page.keys.map { SeenKey(feed: feed, key: try SyncJSON.keyText($0)) })
            }
            if mode.removesUndelivered(hasMore: page.hasMore) {
                try await self.removeUndelivered(entity, feed: feed, in: writer)
            }
            mode = mode.after(hasMore: page.hasMore)
            try await self.keepWaitingEdits(entity, over: page, in: writer)
            try await tx.repository(FeedCursor.self).upsert(
                FeedCursor(feed: feed, cursor: page.cursor, copyMode: mode, pulledAt: now))
            return mode
        }
    }

    /// After rows the server sent were stored: local edits not pushed yet stay visible over them
    /// (written again, in order), and the server's values move the shadows discards restore from
    /// (only rows with waiting edits have one).
    func keepWaitingEdits(_ entity: any SyncedEntityBox, over page: ErasedPage, in writer: any StoreWriter)
        async throws
    {
        let tableName = entity.table.name
        let waiting = try await Transaction(writer: writer).repository(OutboxEntry.self).fetch(
            where: \.table == tableName, orderBy: [.ascending(\.sequence)])
        guard !waiting.isEmpty else { return }
        let edited = Set(waiting.map(\.key))
        var touched = Set<String>()
        for (index, key) in page.keys.enumerated() {
            let text = try SyncJSON.keyText(key)
            guard edited.contains(text) else { continue }
            touched.insert(text)
            try await Shadows.advance(tableName, text, changes: page.changes(index), in: writer)
        }
        for key in page.deletions {
            let text = try SyncJSON.keyText(key)
            guard edited.contains(text) else { continue }
            touched.insert(text)
            try await Shadows.advance(tableName, text, changes: nil, in: writer)
        }
        for entry in waiting where touched.contains(entry.key) {
            try await reapply(entry, entity: entity, in: writer)
        }
    }

    /// Stores rows the server sent outside a feed (a ``ResourceLoader`` refresh) through `writer`:
    /// as a pulled page is, so that waiting local edits stay on top. `false` when `Root` does not
    /// sync with this engine (the caller stores them as they are).
    func storeServerRows<Root: Entity>(_ patches: [Patch<Root>], in writer: any StoreWriter) async throws -> Bool {
        guard let entity = entities[Root.schema.tableName] else { return false }
        let page = ErasedPage(patches)
        try await entity.store(page, in: writer)
        try await keepWaitingEdits(entity, over: page, in: writer)
        return true
    }

    /// At the end of a full copy: removes rows the copy did not deliver (unless a local edit of
    /// them waits to be pushed).
    private func removeUndelivered(_ entity: any SyncedEntityBox, feed: String, in writer: any StoreWriter)
        async throws
    {
        let tx = Transaction(writer: writer)
        let seen = Set(try await tx.repository(SeenKey.self).fetch(where: \.feed == feed).map(\.key))
        let tableName = entity.table.name
        let pending = Set(try await tx.repository(OutboxEntry.self).fetch(where: \.table == tableName).map(\.key))
        let stored = try await RowReads.keyTexts(of: entity.table, in: writer)
        let stale = try stored.filter { !seen.contains($0) && !pending.contains($0) }.map { try SyncJSON.key($0) }
        try await RowReads.remove(from: entity.table, keys: stale, in: writer)
        try await RowVersion.store(tableName, keys: try stale.map(SyncJSON.keyText), versions: nil, in: writer)
        // Rows kept for their waiting edits are gone from the server: so says their shadow.
        for key in stored where !seen.contains(key) && pending.contains(key) {
            try await Shadows.advance(tableName, key, changes: nil, in: writer)
        }
        _ = try await tx.repository(SeenKey.self).remove(where: \.feed == feed)
    }

    /// Writes `entry`'s edit to the local row again (without recording it).
    func reapply(_ entry: OutboxEntry, entity: any SyncedEntityBox, in writer: any StoreWriter) async throws {
        let key = try SyncJSON.key(entry.key)
        if entry.operation == OutboxEntry.Operation.delete {
            try await RowReads.remove(from: entity.table, keys: [key], in: writer)
            return
        }
        let changes = try SyncJSON.values(entry.changes)
        guard !changes.isEmpty else { return }
        do {
            try await writer.savepoint { inner in try await entity.apply(values: changes, key: key, in: inner) }
        } catch let error as DepotError where error.kind == .missingColumns {
            // The row is gone on the server and the edit is partial: nothing to show it on.
        }
    }

    // MARK: - Push

    /// Pushes the outbox in order, carrying out what its ``PushMachine`` decides.
    private func pushOutbox(into report: inout SyncReport) async throws {
        var machine = PushMachine()
        var after = 0
        while true {
            let batch = try await base.repository(OutboxEntry.self).fetch(
                where: \.sequence > after, orderBy: [.ascending(\.sequence)], limit: 100)
            guard !batch.isEmpty else { break }
            for entry in batch {
                after = max(after, entry.sequence)
                guard machine.shouldPush(entry) else { continue }
                guard let entity = entities[entry.table] else {
                    throw DepotError(
                        .invalidQuery,
                        "the outbox holds a change of \(entry.table), which this engine does not sync: "
                            + "declare it in SyncEngine(entities:)", table: entry.table)
                }
                var current: OutboxEntry? = entry
                while let pushing = current {
                    current = nil
                    var remote: ErasedRemote?
                    var failure: (any Error)?
                    var rejection: SyncRejection?
                    let answer: PushMachine.Answer
                    var appliedVersion: Int?
                    do {
                        let seen = try await base.repository(RowVersion.self).find(pushing.table, pushing.key)?.version
                        switch try await entity.push(pushing, baseVersion: seen, client: try api()) {
                        case .applied(let version):
                            appliedVersion = version
                            answer = .applied
                        case .conflict(let row):
                            remote = row
                            answer = .conflict
                        }
                    } catch {
                        failure = error
                        rejection = PushMachine.rejection(for: error)
                        answer = rejection == nil ? .failed : .rejected
                    }
                    if answer != .failed { report.requests += 1 }
                    switch try machine.answered(pushing, with: answer) {
                    case .removeApplied:
                        let appliedVersion = appliedVersion
                        try await base.transaction { writer in
                            let removed = try await Transaction(writer: writer).repository(OutboxEntry.self).remove(
                                where: \.sequence == pushing.sequence && \.idempotencyKey == pushing.idempotencyKey)
                            guard removed == 1 else { return }
                            try await Shadows.applied(pushing, in: writer)
                            // The row's version after this push: what its next push starts from.
                            if let appliedVersion {
                                try await RowVersion.store(
                                    pushing.table, keys: [pushing.key], versions: [appliedVersion], in: writer)
                            } else if pushing.operation == .delete {
                                try await RowVersion.store(
                                    pushing.table, keys: [pushing.key], versions: nil, in: writer)
                            }
                        }
                        report.pushed += 1
                        update { $0.lastPush = self.clock() }
                    case .keepRejected:
                        // Only a refusal has a rejection (PushMachine.rejection(for:)): the status,
                        // message and endpoint come from the server's answer, none made up.
                        guard let rejection else {
                            throw failure
                                ?? DepotError(
                                    .invalidQuery,
                                    "change \(pushing.sequence) of \(pushing.table) was refused "
                                        + "without an answer saying why", table: pushing.table)
                        }
                        report.rejected += 1
                        var rejected = pushing
                        rejected.rejection = try rejection.jsonText()
                        try await base.repository(OutboxEntry.self).upsert(rejected)
                    case .stopAfterFailure:
                        var failed = pushing
                        failed.attempts += 1
                        _ = try? await base.repository(OutboxEntry.self).upsert(failed)
                        throw failure ?? DepotError(.connection, "the push of change \(pushing.sequence) failed")
                    case .resolve:
                        report.conflicts += 1
                        guard let remote else { break }
                        current = try await resolve(pushing, remote: remote, entity: entity)
                        if current == nil { report.resolvedByServer += 1 }
                    }
                }
            }
        }
    }

    /// Stores the row the entity's policy chooses and returns the entry to push it with (`nil`
    /// when the server's row stands as it is).
    private func resolve(_ entry: OutboxEntry, remote: ErasedRemote, entity: any SyncedEntityBox) async throws
        -> OutboxEntry?
    {
        let table = entity.table
        let columns = table.columns.map(\.name)
        let chosen = try entity.resolve(entry, remote: remote)
        let keyColumns = Set(table.primaryKey)
        var changes: [String: StoredValue] = [:]
        if !chosen.isEmpty {
            for (index, name) in columns.enumerated() where !keyColumns.contains(name) {
                if !RowReads.same(chosen[index], remote.values[index], type: table.columns[index].type) {
                    changes[name] = chosen[index]
                }
            }
        }
        let remoteValues = Dictionary(uniqueKeysWithValues: zip(columns, remote.values))
        let deletes = entry.operation == OutboxEntry.Operation.delete && chosen.isEmpty
        let next: OutboxEntry? =
            deletes || !changes.isEmpty
            ? OutboxEntry(
                sequence: entry.sequence, table: entry.table, key: entry.key, operation: entry.operation,
                changes: try SyncJSON.valuesText(changes), base: try SyncJSON.valuesText(remoteValues),
                editedAt: entry.editedAt, idempotencyKey: UUID().uuidString, attempts: entry.attempts,
                rejection: nil)
            : nil
        try await base.transaction { writer in
            let outbox = Transaction(writer: writer).repository(OutboxEntry.self)
            if let next {
                try await outbox.upsert(next)
            } else {
                _ = try await outbox.remove(entry.sequence)
            }
            // The server's row as the conflict showed it, and its version.
            try await Shadows.advance(entry.table, entry.key, changes: remoteValues, replacing: true, in: writer)
            if let version = remote.version {
                try await RowVersion.store(entry.table, keys: [entry.key], versions: [version], in: writer)
            }
            if next == nil { try await Shadows.dropIfDone(entry.table, entry.key, in: writer) }
            // The local row becomes the chosen one, then later local edits of it go on top.
            let key = try SyncJSON.key(entry.key)
            if chosen.isEmpty {
                try await RowReads.remove(from: table, keys: [key], in: writer)
            } else {
                try await entity.apply(
                    values: Dictionary(uniqueKeysWithValues: zip(columns, chosen)), key: key, in: writer)
            }
            let later = try await outbox.fetch(
                where: \.table == entry.table && \.key == entry.key && \.sequence > entry.sequence,
                orderBy: [.ascending(\.sequence)])
            for laterEntry in later { try await self.reapply(laterEntry, entity: entity, in: writer) }
        }
        return next
    }

    // MARK: - State

    func update(_ change: (inout EngineState) -> Void) {
        state.withLock { change(&$0) }
        stateChanges.publish(())
    }
}

/// What one ``SyncEngine/sync()`` did.
public struct SyncReport: Sendable, Equatable {
    /// HTTP requests sent (pages and pushes; retries inside the client not counted).
    public var requests = 0
    /// Local edits the server applied.
    public var pushed = 0
    /// Pushes the server answered with a conflict.
    public var conflicts = 0
    /// Conflicts whose resolution kept the server's row as it was (nothing pushed again).
    public var resolvedByServer = 0
    /// Edits the server refused (kept as ``PendingChange``s).
    public var rejected = 0
    /// Rows (whole or partial) the feeds brought.
    public var pulledRows = 0
    /// Deletions the feeds brought.
    public var pulledDeletions = 0
    /// Full copies started because a cursor had expired.
    public var fullCopies = 0

    /// An empty report.
    public init() {}
}
