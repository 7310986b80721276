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
