import Depot
import DepotSQLite
import DepotTesting
import Testing

@Suite("Fault-injecting store")
struct FaultInjectingStoreTests {
    static func stores() throws -> [any Store] { [InMemoryStore(), try SQLiteStore.temporary()] }

    @Test("the nth write fails with the injected error, its transaction writes nothing, and later writes work")
    func failsTheNthWrite() async throws {
        for base in try Self.stores() {
            let store = FaultInjectingStore(base)
            let airports = store.repository(TestAirport.self)
            store.failWrite(2)
            let error = await #expect(throws: DepotError.self) {
                try await store.write { tx in
                    try await tx.repository(TestAirport.self).insert(TestAirport.sample[0])
                    try await tx.repository(TestAirport.self).insert(TestAirport.sample[1])
                }
            }
            #expect(error?.kind == .storage)
            #expect(error?.message.contains("write 2 failed") == true)
            #expect(try await airports.count() == 0)
            try await airports.insert(TestAirport.sample[2])
            #expect(try await airports.count() == 1)
            #expect(store.writes == 3)
        }
    }

    @Test("a write fails with the test's own error, through a mapper's persist too")
    func failsWithOwnError() async throws {
        struct Offline: Error {}
        let store = FaultInjectingStore(try SQLiteStore.temporary())
        store.failWrite(with: Offline())
        await #expect(throws: Offline.self) {
            try await store.repository(TestAirport.self).persist(TestAirport.sample, mapper: SampleMapper())
        }
        #expect(try await store.repository(TestAirport.self).count() == 0)
    }

    @Test("a dropped announcement reaches no observer; the next commit does")
    func dropsAnnouncements() async throws {
        for base in try Self.stores() {
            let store = FaultInjectingStore(base)
            var commits = store.commits().makeAsyncIterator()
            store.dropAnnouncements(1)
            try await store.repository(TestAirport.self).insert(TestAirport.sample[0])
            try await store.repository(TestOrder.self).insert(TestOrder.sample[0])
            #expect(await commits.next()?.tables == [TestOrder.schema.tableName])
            #expect(try await store.repository(TestAirport.self).count() == 1, "the hidden commit was written")
        }
    }

    @Test("held transactions wait at the gate, unstarted, until it opens")
    func holdsTransactions() async throws {
        let store = FaultInjectingStore(try SQLiteStore.temporary())
        let airports = store.repository(TestAirport.self)
        let gate = store.holdTransactions()
        async let first: Void = airports.insert(TestAirport.sample[0])
        async let second: Void = airports.insert(TestAirport.sample[1])
        await gate.arrivals(2)
        #expect(try await airports.count() == 0)
        #expect(store.writes == 0)
        gate.open()
        _ = try await (first, second)
        #expect(try await airports.count() == 2)
        try await airports.insert(TestAirport.sample[2])  // an open gate holds nothing
    }
}

struct SampleMapper: PersistMapper {
    func entity(from source: TestAirport) -> TestAirport { source }
}
