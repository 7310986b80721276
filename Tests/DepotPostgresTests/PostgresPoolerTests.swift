import Depot
import DepotPostgres
import DepotTestSupport
import Foundation
import Testing

/// A note of the pooler tests (a table of their own in the PgBouncer's database).
private struct PooledNote: Entity, Equatable {
    var id: String
    var text: String

    static let schema = Schema<PooledNote>("depot_pooler_notes", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.text, "text")
    }
}

@Suite(
    "PostgreSQL behind PgBouncer (transaction mode)", .serialized,
    .enabled(if: PostgresEnvironment.isBouncerConfigured),
    .timeLimit(.minutes(10)))
struct PostgresPoolerTests {
    @Test("behind a transaction pooler, an observer hears other processes' commits through listenerURL")
    func listenerURLHearsOthers() async throws {
        let (pooled, direct) = try PostgresEnvironment.requireBouncer()
        var configuration = try PostgresStore.Configuration(url: pooled)
        configuration.listenerURL = direct
        let observing = PostgresStore(configuration: configuration)
        let writing = try PostgresStore(url: pooled)
        let notes = writing.repository(PooledNote.self)
        _ = try await notes.removeAll()
        var changes = observing.repository(PooledNote.self).observe(orderBy: [.ascending(\.id)]).makeAsyncIterator()
        #expect(try await changes.next() == [])
        // Once the listener heard its probe, commits of others reach it.
        while observing.isHearingOthers == nil { try await Task.sleep(for: .milliseconds(20)) }
        #expect(observing.isHearingOthers == true)
        try await notes.insert(PooledNote(id: "a", text: "through the pooler"))
        var seen = try await changes.next()
        // The listener may re-read once when its LISTEN comes into force: wait for the row.
        while seen?.isEmpty == true { seen = try await changes.next() }
        #expect(seen == [PooledNote(id: "a", text: "through the pooler")])
    }

    @Test(
        "behind a transaction pooler without listenerURL, the listener logs that it hears nothing, naming the setting")
    func listenerWithoutURLSaysSo() async throws {
        let (pooled, _) = try PostgresEnvironment.requireBouncer()
        let (logger, log) = CapturingLogHandler.logger(level: .notice)
        var configuration = try PostgresStore.Configuration(url: pooled)
        configuration.logging = .init(logger: logger)
        configuration.listenerProbeTimeout = .seconds(3)
        let store = PostgresStore(configuration: configuration)
        let commits = store.commits()
        while store.isHearingOthers == nil { try await Task.sleep(for: .milliseconds(20)) }
        #expect(store.isHearingOthers == false)
        let errors = log.lines.filter { $0.level == .error }
        #expect(errors.count == 1)
        #expect(errors.first?.message.contains("listenerURL") == true)
        _ = commits
    }

    @Test("a listenerURL that is not a postgres:// URL fails every operation, naming the setting")
    func badListenerURL() async throws {
        let (pooled, _) = try PostgresEnvironment.requireBouncer()
        var configuration = try PostgresStore.Configuration(url: pooled)
        configuration.listenerURL = "http://db:5432/app"
        let store = PostgresStore(configuration: configuration)
        let error = await #expect(throws: DepotError.self) { try await store.repository(PooledNote.self).count() }
        #expect(error?.kind == .connection && error?.message.contains("listenerURL") == true)
    }
}
