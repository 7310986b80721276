import Depot
import Testing

/// The error a test throws to abort a transaction.
struct Abort: Error {}

extension StoreConformance {
    static let transactionCases: [ConformanceCase] = [
        ConformanceCase("store.write commits calls on several repositories together") {
            (store: any Store) async throws in
            try await store.write { tx in
                try await tx.repository(TestAirport.self).insert(TestAirport.sample)
                try await tx.repository(Reading.self).insert(Reading(station: "ENGM", sequence: 1, value: 3))
                #expect(try await tx.repository(TestAirport.self).count() == 10)
            }
            #expect(try await store.repository(TestAirport.self).count() == 10)
            #expect(try await store.repository(Reading.self).count() == 1)
        },
        ConformanceCase("a thrown error in store.write leaves no trace") { (store: any Store) async throws in
            let airports = try await store.seededAirports()
            await #expect(throws: Abort.self) {
                try await store.write { tx in
                    try await tx.repository(TestAirport.self).removeAll()
                    try await tx.repository(Reading.self).insert(Reading(station: "x", sequence: 1, value: nil))
                    #expect(try await tx.repository(TestAirport.self).count() == 0)
                    throw Abort()
                }
            }
            #expect(try await airports.count() == 10)
            #expect(try await store.repository(Reading.self).count() == 0)
        },
        ConformanceCase("inside a transaction, a failed call is undone alone and the rest commits") {
            (store: any Store) async throws in
            let airports = try await store.seededAirports()
            try await store.write { tx in
                let inner = tx.repository(TestAirport.self)
                try await inner.insert(TestAirport(icao: "NEW1", name: "kept", country: "XX"))
                await #expect(throws: DepotError.self) {
                    try await inner.insert([
                        TestAirport(icao: "NEW2", name: "undone", country: "XX"), TestAirport.sample[0],
                    ])
                }
                #expect(try await inner.find("NEW2") == nil)
            }
            #expect(try await airports.find("NEW1")?.name == "kept")
            #expect(try await airports.find("NEW2") == nil)
        },
        ConformanceCase("reads outside an open transaction see only committed data") {
            (store: any Store) async throws in
            let airports = try await store.seededAirports()
            try await store.write { tx in
                try await tx.repository(TestAirport.self).removeAll()
                #expect(try await airports.count() == 10)
            }
            #expect(try await airports.count() == 0)
        },
        ConformanceCase(
            "calls started side by side on one transaction run one at a time: a failing one is undone alone, the others commit"
        ) { (store: any Store) async throws in
            // Interleaved savepoints used to release each other, so the failing call's undo took
            // the others' rows with it, or its own rows stayed.
            for round in 0..<5 {
                let failures = try await store.write { tx -> Int in
                    let readings = tx.repository(Reading.self)
                    return try await withThrowingTaskGroup(of: Bool.self) { group in
                        for station in 0..<6 {
                            group.addTask {
                                let rows = (1...50).map {
                                    Reading(station: "r\(round)s\(station)", sequence: $0, value: Double($0))
                                }
                                // Every third call repeats a key inside its batch: it fails, and must leave nothing.
                                let batch = station % 3 == 2 ? rows + [rows[0]] : rows
                                do {
                                    try await readings.insert(batch)
                                    return true
                                } catch let error as DepotError where error.kind == .constraintViolation {
                                    return false
                                }
                            }
                        }
                        var failed = 0
                        for try await succeeded in group where !succeeded { failed += 1 }
                        return failed
                    }
                }
                #expect(failures == 2)
                for station in 0..<6 {
                    let stored = try await store.repository(Reading.self).count(
                        where: \.station == "r\(round)s\(station)")
                    #expect(stored == (station % 3 == 2 ? 0 : 50), "round \(round), station \(station)")
                }
            }
        },
        ConformanceCase("a write through the store inside its own transaction fails at once, naming the mistake") {
            (store: any Store) async throws in
            let error = await #expect(throws: DepotError.self) {
                try await store.write { tx in
                    try await tx.repository(TestAirport.self).insert(TestAirport.sample[0])
                    try await store.repository(TestAirport.self).insert(TestAirport.sample[1])
                }
            }
            #expect(error?.kind == .transaction)
            #expect(error?.message.contains("tx.repository") == true, "\(error?.message ?? "")")
            #expect(try await store.repository(TestAirport.self).count() == 0, "the outer transaction rolled back")
            // Nested store.write, and from a child task of the transaction's task, too.
            await #expect(throws: DepotError.self) {
                try await store.write { _ in
                    async let inner: Void = store.write { _ in }
                    try await inner
                }
            }
            // The store still works.
            try await store.repository(TestAirport.self).insert(TestAirport.sample[0])
            #expect(try await store.repository(TestAirport.self).count() == 1)
        },
        ConformanceCase("a task waiting for another transaction to end stops waiting when it is cancelled") {
            (store: any Store) async throws in
            let holding = Signal()
            let release = Signal()
            let holder = Task {
                try await store.write { tx in
                    try await tx.repository(TestAirport.self).insert(TestAirport.sample[0])
                    holding.fire()
                    try await release.wait()
                }
            }
            try await holding.wait()
            let waiter = Task {
                try await store.write { tx in try await tx.repository(TestAirport.self).insert(TestAirport.sample[1]) }
            }
            waiter.cancel()
            // Ends while the holder still holds the store: it did not wait for it.
            await #expect(throws: CancellationError.self) { try await waiter.value }
            release.fire()
            try await holder.value
            #expect(try await store.repository(TestAirport.self).count() == 1)
        },
        ConformanceCase("a batch a store writer receives is all or nothing on its own, and the transaction goes on") {
            (store: any Store) async throws in
            let table = Reading.schema.table
            @Sendable func batch(_ keys: [Int]) -> RowBatch {
                RowBatch(
                    columns: ["station", "sequence", "value"],
                    values: keys.flatMap { [StoredValue.text("w"), .integer(Int64($0)), .null] })
            }
            try await store.transaction { writer in
                try await writer.write(batch([1, 2]), into: table, mode: .insert)
                // Row 3 of this batch repeats key 1, which the transaction holds already.
                await #expect(throws: DepotError.self) {
                    try await writer.write(batch([10, 11, 1, 12]), into: table, mode: .insert)
                }
                try await writer.write(batch([20]), into: table, mode: .insert)
            }
            let stored = try await store.repository(Reading.self).fetch(orderBy: [.ascending(\.sequence)])
            #expect(stored.map(\.sequence) == [1, 2, 20])
        },
        ConformanceCase("a transaction used after it ended throws") { (store: any Store) async throws in
            let kept = try await store.write { tx in tx }
            let error = await #expect(throws: DepotError.self) {
                try await kept.repository(TestAirport.self).insert(TestAirport.sample[0])
            }
            #expect(error?.kind == .transaction)
            #expect(try await store.repository(TestAirport.self).count() == 0)
        },
    ]
}
