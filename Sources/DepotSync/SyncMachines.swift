import Depot
import DepotHTTP

/// The decisions of pulling one feed, without a store or a network: which page to ask for, what
/// to do with the page that came, when to stop. ``SyncEngine`` carries its actions out (a request,
/// a transaction) and reports back what happened.
///
/// ```swift
/// var pull = PullMachine(feed: "notes", table: "notes")
/// var action = pull.start(stored: cursorRow)            // .fetch(after: cursorRow?.cursor)
/// action = try pull.received(PageSummary(cursor: "c2", hasMore: true, isExpired: false))
/// // .store(plan): write the page as the plan says, in one transaction, then
/// action = pull.stored()                                // .fetch(after: "c2")
/// ```
struct PullMachine: Sendable {
    /// What to do next.
    enum Action: Equatable, Sendable {
        /// Ask the feed for the page after `cursor`.
        case fetch(after: String?)
        /// Forget the cursor (store it as `nil`, no copy under way), then pull from the start.
        case restartCopy
        /// Store the page received, as the plan says, with its cursor, in one transaction.
        case store(StorePlan)
        /// The feed is pulled to its end.
        case finished
    }

    /// How a page is stored.
    struct StorePlan: Equatable, Sendable {
        /// Whether a full copy begins with this page: the engine looks whether the table is empty
        /// (``FeedCursor/CopyMode/beginning(tableIsEmpty:)``) and forgets keys an earlier copy
        /// tracked.
        var beginsCopy: Bool
        /// The copy mode stored before the page (when no copy begins with it).
        var mode: FeedCursor.CopyMode
        /// Whether more pages follow (a copy ends with the last one).
        var hasMore: Bool
    }

    /// What the engine tells the machine of a page it received.
    struct PageSummary: Equatable, Sendable {
        var cursor: String?
        var hasMore: Bool
        var isExpired: Bool
    }

    let feed: String
    let table: String
    private var asked: Set<String?> = []
    private var expiredOnce = false
    private var current: String?
    private var mode = FeedCursor.CopyMode.none
    private var received: PageSummary?

    init(feed: String, table: String) {
        self.feed = feed
        self.table = table
    }

    /// Begins from the stored cursor row (`nil` before the first pull).
    mutating func start(stored: FeedCursor?) -> Action {
        fetch(after: stored?.cursor, mode: stored?.copyMode ?? .none)
    }

    /// After the engine forgot the cursor (``Action/restartCopy``).
    mutating func restarted() -> Action { fetch(after: nil, mode: .none) }

    /// Decides what to do with the page that came for the last ``Action/fetch(after:)``.
    ///
    /// - Throws: `DepotError` of kind `.mappingFailed` when the feed loops (more follow, with a
    ///   cursor this pull asked from already) or says it expired when asked from the start.
    mutating func received(_ page: PageSummary) throws -> Action {
        if page.hasMore, !page.isExpired, asked.contains(page.cursor) {
            // Asking again would only bring this page again: a server bug, not a reason to loop.
            throw DepotError(
                .mappingFailed,
                "the feed \(feed) answered that more changes follow, but with a cursor this pull "
                    + "asked from already (\(page.cursor.map { "'\($0)'" } ?? "none")); the page is not stored "
                    + "and the pull stops instead of asking forever",
                table: table)
        }
        if page.isExpired {
            guard !expiredOnce, current != nil else {
                throw DepotError(
                    .mappingFailed, "the feed \(feed) answered that its cursor expired when asked from the start",
                    table: table)
            }
            expiredOnce = true
            return .restartCopy
        }
        received = page
        return .store(
            StorePlan(beginsCopy: current == nil && mode == .none, mode: mode, hasMore: page.hasMore))
    }

    /// After the engine stored the page (and its cursor) with `mode`.
    mutating func stored(mode storedMode: FeedCursor.CopyMode) -> Action {
        guard let page = received else { return .finished }
        received = nil
        guard page.hasMore else { return .finished }
        return fetch(after: page.cursor, mode: storedMode)
    }

    private mutating func fetch(after cursor: String?, mode: FeedCursor.CopyMode) -> Action {
        current = cursor
        self.mode = mode
        asked.insert(cursor)
        return .fetch(after: cursor)
    }
}

extension FeedCursor.CopyMode {
    /// The mode of a copy beginning now: into an empty table nothing can be left over to remove.
    static func beginning(tableIsEmpty: Bool) -> Self { tableIsEmpty ? .intoEmpty : .trackingKeys }

    /// Whether a page stored in this mode records the keys it delivers.
    var tracksKeys: Bool { self == .trackingKeys }

    /// The mode after a page stored in this one; a copy ends with its last page.
    func after(hasMore: Bool) -> Self { hasMore ? self : .none }

    /// Whether the page stored in this mode ends a copy that must remove the rows it did not
    /// deliver.
    func removesUndelivered(hasMore: Bool) -> Bool { !hasMore && self == .trackingKeys }
}

/// The decisions of pushing the outbox, without a store or a network: which entries to push,
/// which wait behind a refused edit of the same row, what each answer leads to.
///
/// ```swift
/// var push = PushMachine()
/// if push.shouldPush(entry) { … send it … }
/// switch try push.answered(entry, with: .conflict) { … }   // .resolve
/// ```
struct PushMachine: Sendable {
    /// How the server answered a push.
    enum Answer: Equatable, Sendable {
        /// Applied (or already applied under the same idempotency key).
        case applied
        /// The server's row no longer matches the edit's base.
        case conflict
        /// Refused for good (a 4xx other than 401, 408 and 429).
        case rejected
        /// Failed in a way worth retrying later (the network, a 5xx, a 401).
        case failed
    }

    /// What to do after an answer.
    enum Action: Equatable, Sendable {
        /// Remove the entry from the outbox and move the row's shadow on.
        case removeApplied
        /// Ask the entity's policy, then push what it chose (or nothing, when the server's row
        /// stands).
        case resolve
        /// Keep the entry with its rejection; later edits of its row wait behind it.
        case keepRejected
        /// Count a failed attempt on the entry, and stop pushing (the error is thrown).
        case stopAfterFailure
    }

    /// Resolutions one entry may go through before the push gives up on it.
    static let maximumRounds = 5

    /// Rows (table and key) whose edits wait behind a refused one.
    private(set) var blocked: Set<String> = []
    private var rounds: [Int: Int] = [:]

    /// Whether `entry` is pushed now: not when it was refused, or an earlier edit of its row was
    /// (its row is blocked from then on).
    mutating func shouldPush(_ entry: OutboxEntry) -> Bool {
        let row = Self.row(entry)
        if entry.rejection != nil || blocked.contains(row) {
            blocked.insert(row)
            return false
        }
        return true
    }

    /// What to do after the server answered `entry`.
    ///
    /// - Throws: `DepotError` of kind `.constraintViolation` when the entry conflicted more than
    ///   ``maximumRounds`` times (the row keeps changing on the server).
    mutating func answered(_ entry: OutboxEntry, with answer: Answer) throws -> Action {
        switch answer {
        case .applied:
            return .removeApplied
        case .rejected:
            blocked.insert(Self.row(entry))
            return .keepRejected
        case .failed:
            return .stopAfterFailure
        case .conflict:
            let round = rounds[entry.sequence, default: 0] + 1
            rounds[entry.sequence] = round
            guard round <= Self.maximumRounds else {
                throw DepotError(
                    .constraintViolation,
                    "change \(entry.sequence) of \(entry.table) \(entry.key) still conflicts "
                        + "after \(Self.maximumRounds) resolutions: the row keeps changing on the server",
                    table: entry.table)
            }
            return .resolve
        }
    }

    /// How an error of a push is answered: a refusal of the change itself, or a failure to retry.
    static func answer(for error: any Error) -> Answer { rejection(for: error) == nil ? .failed : .rejected }

    /// The server's refusal of the change itself, named by its status, message and endpoint; `nil`
    /// for a failure worth retrying.
    static func rejection(for error: any Error) -> SyncRejection? {
        guard let error = error as? HTTPError, let status = error.status else { return nil }
        // 401, 408 and 429 say something about the credentials or the server's load, not the change;
        // 403 says this caller may not make this change.
        guard (400..<500).contains(status), ![401, 408, 429].contains(status) else { return nil }
        return SyncRejection(status: status, message: error.serverMessage ?? error.detail, endpoint: error.endpoint)
    }

    private static func row(_ entry: OutboxEntry) -> String { entry.table + "|" + entry.key }
}
