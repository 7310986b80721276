import Depot
import DepotHTTP
import Foundation
import Testing

@testable import DepotSync

@Suite("DepotSync's pull and push machines (no store, no server)")
struct SyncMachinesTests {
    typealias Page = PullMachine.PageSummary

    @Test("a first pull asks from the start, copies, and follows the cursor until no more follow")
    func firstPullCopies() throws {
        var pull = PullMachine(feed: "notes", table: "notes")
        let step1 = pull.start(stored: nil)
        #expect(step1 == .fetch(after: nil))
        #expect(
            try pull.received(Page(cursor: "c1", hasMore: true, isExpired: false))
                == .store(.init(beginsCopy: true, mode: .none, hasMore: true)))
        let step2 = pull.stored(mode: .trackingKeys)
        #expect(step2 == .fetch(after: "c1"))
        #expect(
            try pull.received(Page(cursor: "c2", hasMore: false, isExpired: false))
                == .store(.init(beginsCopy: false, mode: .trackingKeys, hasMore: false)))
        let step3 = pull.stored(mode: .none)
        #expect(step3 == .finished)
    }

    @Test("a pull resumes from a stored cursor and its copy mode")
    func resumes() throws {
        var pull = PullMachine(feed: "notes", table: "notes")
        let stored = FeedCursor(feed: "notes", cursor: "c7", copyMode: .intoEmpty, pulledAt: nil)
        let step4 = pull.start(stored: stored)
        #expect(step4 == .fetch(after: "c7"))
        #expect(
            try pull.received(Page(cursor: "c8", hasMore: false, isExpired: false))
                == .store(.init(beginsCopy: false, mode: .intoEmpty, hasMore: false)))
    }

    @Test("an expired cursor restarts one full copy; a second expiry, or one from the start, fails")
    func expiry() throws {
        var pull = PullMachine(feed: "notes", table: "notes")
        _ = pull.start(stored: FeedCursor(feed: "notes", cursor: "old", copyMode: .none, pulledAt: nil))
        let step5 = try pull.received(Page(cursor: nil, hasMore: false, isExpired: true))
        #expect(step5 == .restartCopy)
        let step6 = pull.restarted()
        #expect(step6 == .fetch(after: nil))
        #expect(throws: DepotError.self) { try pull.received(Page(cursor: nil, hasMore: false, isExpired: true)) }

        var fresh = PullMachine(feed: "notes", table: "notes")
        _ = fresh.start(stored: nil)
        let error = #expect(throws: DepotError.self) {
            try fresh.received(Page(cursor: nil, hasMore: false, isExpired: true))
        }
        #expect(error?.message.contains("when asked from the start") == true)
    }

    @Test("a feed that says more follow with a cursor already asked from fails, naming the feed and cursor")
    func loops() throws {
        var pull = PullMachine(feed: "notes /sync", table: "notes")
        _ = pull.start(stored: nil)
        _ = try pull.received(Page(cursor: "a", hasMore: true, isExpired: false))
        let step7 = pull.stored(mode: .intoEmpty)
        #expect(step7 == .fetch(after: "a"))
        _ = try pull.received(Page(cursor: "b", hasMore: true, isExpired: false))
        _ = pull.stored(mode: .intoEmpty)
        let error = #expect(throws: DepotError.self) {
            try pull.received(Page(cursor: "a", hasMore: true, isExpired: false))
        }
        #expect(error?.message.contains("notes /sync") == true && error?.message.contains("'a'") == true)
        // The same cursor on the last page is fine: nothing more is asked.
        var last = PullMachine(feed: "notes", table: "notes")
        _ = last.start(stored: FeedCursor(feed: "notes", cursor: "z", copyMode: .none, pulledAt: nil))
        #expect(
            try last.received(Page(cursor: "z", hasMore: false, isExpired: false))
                == .store(.init(beginsCopy: false, mode: .none, hasMore: false)))
    }

    @Test("copy modes: a copy into an empty table tracks no keys; one into rows removes what it missed at its end")
    func copyModes() {
        #expect(FeedCursor.CopyMode.beginning(tableIsEmpty: true) == .intoEmpty)
        #expect(FeedCursor.CopyMode.beginning(tableIsEmpty: false) == .trackingKeys)
        #expect(!FeedCursor.CopyMode.intoEmpty.tracksKeys && FeedCursor.CopyMode.trackingKeys.tracksKeys)
        #expect(FeedCursor.CopyMode.trackingKeys.after(hasMore: true) == .trackingKeys)
        #expect(FeedCursor.CopyMode.trackingKeys.after(hasMore: false) == FeedCursor.CopyMode.none)
        #expect(FeedCursor.CopyMode.trackingKeys.removesUndelivered(hasMore: false))
        #expect(!FeedCursor.CopyMode.trackingKeys.removesUndelivered(hasMore: true))
        #expect(!FeedCursor.CopyMode.intoEmpty.removesUndelivered(hasMore: false))
        #expect(!FeedCursor.CopyMode.none.removesUndelivered(hasMore: false))
    }

    static func entry(_ sequence: Int, key: String, rejected: Bool = false) -> OutboxEntry {
        OutboxEntry(
            sequence: sequence, table: "notes", key: key, operation: .set, changes: "{}", base: nil,
            editedAt: Date(timeIntervalSince1970: 0), idempotencyKey: "k\(sequence)", attempts: 0,
            rejection: rejected ? "{}" : nil)
    }

    @Test("a refused edit blocks the later edits of its row, not of other rows")
    func rejectionsBlockTheirRow() throws {
        var push = PushMachine()
        let first = Self.entry(1, key: "a")
        let step8 = push.shouldPush(first)
        #expect(step8)
        let step9 = try push.answered(first, with: .rejected)
        #expect(step9 == .keepRejected)
        let step10 = push.shouldPush(Self.entry(2, key: "a"))
        #expect(!step10)
        let step11 = push.shouldPush(Self.entry(3, key: "b"))
        #expect(step11)
        // An edit refused in an earlier sync blocks its row too.
        var next = PushMachine()
        let step12 = next.shouldPush(Self.entry(4, key: "c", rejected: true))
        #expect(!step12)
        let step13 = next.shouldPush(Self.entry(5, key: "c"))
        #expect(!step13)
        #expect(next.blocked == ["notes|c"])
    }

    @Test("answers: applied removes, a failure stops, a conflict resolves at most five times")
    func answers() throws {
        var push = PushMachine()
        let entry = Self.entry(1, key: "a")
        let step14 = try push.answered(entry, with: .applied)
        #expect(step14 == .removeApplied)
        let step15 = try push.answered(entry, with: .failed)
        #expect(step15 == .stopAfterFailure)
        for _ in 1...PushMachine.maximumRounds {
            let round = try push.answered(entry, with: .conflict)
            #expect(round == .resolve)
        }
        #expect(throws: DepotError.self) { try push.answered(entry, with: .conflict) }
        let step16 = try push.answered(Self.entry(2, key: "a"), with: .conflict)
        #expect(step16 == .resolve)
    }

    @Test("errors: a 4xx refuses the change, except 401, 408 and 429; 5xx and the network are retried later")
    func errorsToAnswers() {
        func http(_ status: Int?) -> HTTPError { HTTPError(.unexpectedStatus, endpoint: "POST /x", status: status) }
        for status in [400, 403, 404, 409, 410, 413, 422] {
            #expect(PushMachine.answer(for: http(status)) == .rejected)
        }
        for status in [401, 408, 429, 500, 503] { #expect(PushMachine.answer(for: http(status)) == .failed) }
        #expect(PushMachine.answer(for: http(nil)) == .failed)
        #expect(PushMachine.answer(for: DepotError(.connection, "down")) == .failed)
        let refused = HTTPError(
            .unexpectedStatus, endpoint: "POST /sync/notes/push", detail: "422", status: 422,
            serverMessage: "notes.title is longer than 200 characters")
        #expect(
            PushMachine.rejection(for: refused)
                == SyncRejection(
                    status: 422, message: "notes.title is longer than 200 characters", endpoint: "POST /sync/notes/push"
                ))
        #expect(PushMachine.rejection(for: http(503)) == nil)
    }
}
