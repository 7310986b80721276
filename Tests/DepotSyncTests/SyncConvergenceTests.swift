import AirportsExample
import Depot
import DepotHTTP
import DepotSQLite
import DepotSync
import DepotTestSupport
import Foundation
import PropertyBased
import Testing

/// Replicas editing offline against a real server behind a faulty network must end equal, with
/// every edit applied once: last writer wins, so each field ends with its latest edit's value.
@Suite("Sync convergence under faults", .timeLimit(.minutes(20)))
struct SyncConvergenceTests {
    /// One step of a schedule: a replica edits a field of an airport (to a value no other edit
    /// uses), deletes it, or syncs.
    struct Step: Sendable, CustomStringConvertible {
        var replica: Int
        var action: Int  // 0–6 edit, 7 delete, 8 this replica syncs, 9 all replicas sync at once
        var airport: Int
        var field: Int

        var description: String { "r\(replica) a\(action) #\(airport) f\(field)" }
    }

    static let fields = ["name", "city", "iata", "elevation"]

    @Test(
        "random edit schedules of two and three replicas converge through dropped responses, duplicates, 503 bursts and reordering"
    )
    func randomSchedulesConverge() async throws {
        let all = try await someAirports(["IS"])
        let steps = zip(Gen.int(in: 0...2), Gen.int(in: 0...9), Gen.int(in: 0...3), Gen.int(in: 0...3)).map {
            Step(replica: $0, action: $1, airport: $2, field: $3)
        }
        await propertyCheck(count: 40, input: Gen.int(in: 2...3), steps.array(of: 4...24), Gen.int(in: 1...1_000_000)) {
            replicas, schedule, seed in
            do {
                try await Self.run(
                    replicas: replicas, schedule: schedule, seed: UInt64(seed), airports: Array(all.prefix(40)))
            } catch {
                Issue.record("replicas \(replicas), seed \(seed), schedule \(schedule): \(error)")
            }
        }
    }

    @Test("a fixed harsh schedule: every fault kind is injected and the replicas still converge")
    func harshFixedSchedule() async throws {
        var schedule: [Step] = []
        for round in 0..<12 {
            for replica in 0..<3 {
                schedule.append(
                    Step(
                        replica: replica, action: round % 7, airport: (round + replica) % 4,
                        field: (round * 3 + replica) % 4))
                if round % 3 == replica { schedule.append(Step(replica: replica, action: 8, airport: 0, field: 0)) }
            }
        }
        let faults = try await Self.run(
            replicas: 3, schedule: schedule, seed: 42, airports: Array(try await someAirports(["IS"]).prefix(40)))
        #expect(faults["drop", default: 0] > 0)
        #expect(faults["duplicate", default: 0] > 0)
        #expect(faults["503", default: 0] > 0)
    }

    /// Runs `schedule`, then syncs every replica until all are quiet, and checks convergence.
    /// Returns the faults injected.
    @discardableResult
    static func run(
        replicas count: Int, schedule: [Step], seed: UInt64, airports: [Airport], server given: (any Store)? = nil,
        replicaStores: [any Store]? = nil
    ) async throws -> [String: Int] {
        var injected: [String: Int] = [:]
        try await withSyncServer(airports, on: given) { server, serverStore in
            let clock = TestClock()
            var retry = RetryPolicy(maximumAttempts: 3, baseDelay: .milliseconds(1), maximumDelay: .milliseconds(5))
            retry.retryableStatuses.insert(503)
            var transports: [FaultTransport] = []
            var engines: [SyncEngine] = []
            var stores: [any Store] = []
            for index in 0..<count {
                let transport = FaultTransport(seed: seed &+ UInt64(index), rates: .harsh)
                let store = try replicaStores?[index] ?? SQLiteStore.temporary()
                var configuration = APIClient.Configuration.writing
                configuration.retryPolicy = retry
                let client = APIClient(baseURL: server.baseURL, transport: transport, configuration: configuration)
                transports.append(transport)
                stores.append(store)
                engines.append(SyncEngine.airports(store: store, client: client, pageSize: 16, clock: clock.function))
            }
            let keys = airports.prefix(4).map(\.icao)
            // The latest edit of each (airport, field), by time: what last-writer-wins must keep.
            var latest: [String: [String: StoredValue]] = [:]
            // When each airport was last deleted and last edited (by the shared clock's steps).
            var deletedAt: [String: Int] = [:]
            var editedAt: [String: Int] = [:]
            var counter = 0
            for engine in engines { try await syncPatiently(engine) }
            for step in schedule {
                let engine = engines[step.replica % count]
                let icao = keys[step.airport % keys.count]
                let repository = engine.store.repository(Airport.self)
                switch step.action {
                case 0...6:
                    clock.advance()
                    counter += 1
                    let field = fields[step.field % fields.count]
                    let value: StoredValue
                    let assignment: Assignment<Airport>
                    switch field {
                    case "name":
                        value = .text("name \(counter)")
                        assignment = .set(\.name, to: "name \(counter)")
                    case "city":
                        value = .text("city \(counter)")
                        assignment = .set(\.city, to: "city \(counter)")
                    case "iata":
                        value = .text("I\(counter)")
                        assignment = .set(\.iata, to: "I\(counter)")
                    default:
                        value = .double(Double(counter) + 0.5)
                        assignment = .set(\.elevation, to: Double(counter) + 0.5)
                    }
                    if try await repository.update(where: \.icao == icao, set: [assignment]) == 1 {
                        latest[icao, default: [:]][field] = value
                        editedAt[icao] = counter
                    }
                case 7:
                    clock.advance()
                    counter += 1
                    if try await repository.remove(icao) { deletedAt[icao] = counter }
                case 8:
                    _ = try? await engine.sync()  // may fail under the faults: the outbox keeps what was not pushed
                default:
                    // Concurrent syncs: their requests interleave (and the delays reorder them).
                    await withTaskGroup(of: Void.self) { group in
                        for other in engines { group.addTask { _ = try? await other.sync() } }
                    }
                }
            }
            for transport in transports { transport.set(.none) }
            for _ in 0..<2 {
                for engine in engines { try await syncPatiently(engine) }
            }
            let expected = try await serverAirports(serverStore)
            for (index, store) in stores.enumerated() {
                let rows = try await store.repository(Airport.self).fetch(orderBy: [.ascending(\.icao)])
                #expect(rows == expected, "replica \(index) differs from the server")
                // Edits behind a rejection (an airport deleted elsewhere: 404) wait for the app; nothing else may.
                let all = try await engines[index].pendingChanges()
                let rejectedKeys = Set(all.filter { $0.rejection != nil }.map(\.key))
                let pending = all.filter { !rejectedKeys.contains($0.key) }
                #expect(pending.isEmpty, "replica \(index) still has \(pending) to push")
                for change in all where change.rejection != nil {
                    #expect(change.rejection?.status == 404, "\(change)")
                }
            }
            for icao in keys {
                let stored = expected.first { $0.icao == icao }
                if let deleted = deletedAt[icao] {
                    if editedAt[icao, default: 0] < deleted {
                        #expect(stored == nil, "\(icao) was deleted, and not edited since")
                        continue
                    }
                    // Edited after the delete on a replica that still had it: last writer wins keeps
                    // that edit when it reached the server first (the delete then conflicts with a
                    // later write); when the delete came first, the edit is refused (404).
                    if stored == nil { continue }
                }
                let row = try #require(stored, "\(icao) is gone though nobody deleted it")
                for (field, value) in latest[icao] ?? [:] {
                    let actual: StoredValue =
                        switch field {
                        case "name": .text(row.name)
                        case "city": row.city.map(StoredValue.text) ?? .null
                        case "iata": row.iata.map(StoredValue.text) ?? .null
                        default: .double(row.elevation)
                        }
                    #expect(actual == value, "\(icao).\(field): the latest edit was \(value), the server has \(actual)")
                }
            }
            // Applied once each, whatever was delivered twice: one kept answer per applied push (the
            // key is the ledger's primary key, written in the push's transaction) and at most one
            // log entry per applied push (a push that changes nothing logs nothing).
            let sql = try #require(serverStore as? any SQLRunning, "the server store runs SQL")
            let (kept, logged) = try await syncLedgerAndLog(of: sql)
            #expect(logged <= kept && kept > 0, "\(logged) log entries, \(kept) applied pushes")
            for transport in transports { injected.merge(transport.faults, uniquingKeysWith: +) }
        }
        return injected
    }

    /// Syncs until a sync succeeds (the network may fail a few in a row), at most 20 times.
    static func syncPatiently(_ engine: SyncEngine) async throws {
        try await retryingFailures { try await engine.sync() }
    }
}
