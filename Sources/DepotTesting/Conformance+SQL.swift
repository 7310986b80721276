import Depot
import DepotSQL
import Foundation
import Testing

/// A row of a hand-written statement, decoded by column name.
private struct CustomerCount: Decodable, Equatable, Sendable {
    var customer: String
    var n: Int
    var last: Int
}

/// Columns of other types, decoded by column name.
private struct Shipment: Decodable, Equatable, Sendable {
    var id: Int
    var placed: Date
    var tracking: UUID?
    var discount: Int?
}

/// `store` as a store that runs hand-written SQL; `nil` for stores that run none (the in-memory
/// store), which the cases below do not apply to: `sql` does not compile on them.
private func running(_ store: any Store) -> (any Store & SQLRunning)? {
    store as? any Store & SQLRunning
}

extension StoreConformance {
    static let sqlCases: [ConformanceCase] = [
        ConformanceCase("hand-written SQL binds every value, quotes identifiers and decodes entities and rows") {
            (store: any Store) async throws in
            let orders = try await store.seededOrders()
            guard let store = running(store) else { return }
            let name = "ada"
            let ada = try await store.sql(
                "SELECT * FROM \(table: TestOrder.self) WHERE \(column: \TestOrder.customer) = \(name) "
                    + "ORDER BY \(column: \TestOrder.id) DESC", as: TestOrder.self)
            #expect(ada == (try await orders.fetch(where: \.customer == "ada", orderBy: [.descending(\.id)])))
            let evil = "ada' OR '1'='1"
            #expect(
                try await store.sql(
                    "SELECT * FROM \(table: TestOrder.self) WHERE customer = \(evil)", as: TestOrder.self
                ).isEmpty, "a value is bound, never spliced")
            let listed = try await store.sql(
                "SELECT * FROM \(table: TestOrder.self) WHERE customer IN \(list: ["ada", "bo"]) ORDER BY id",
                as: TestOrder.self)
            #expect(listed.map(\.id) == [1, 2, 7, 8, 9])
            let none = try await store.sql(
                "SELECT * FROM \(table: TestOrder.self) WHERE customer IN \(list: [String]())", as: TestOrder.self)
            #expect(none.isEmpty, "an empty list matches nothing")
            let counts = try await store.sql(
                SQL(
                    sqlite: "SELECT customer, count(*) AS n, max(id) AS last FROM \(table: TestOrder.self) "
                        + "GROUP BY customer ORDER BY customer",
                    postgres: "SELECT customer, count(*) AS n, max(id) AS last FROM \(table: TestOrder.self) "
                        + "GROUP BY customer ORDER BY customer COLLATE \"C\""),
                decoding: CustomerCount.self)
            #expect(
                counts == [
                    CustomerCount(customer: "Zed", n: 2, last: 4), CustomerCount(customer: "ada", n: 3, last: 9),
                    CustomerCount(customer: "bo", n: 2, last: 8), CustomerCount(customer: "Örjan", n: 2, last: 6),
                ])
            let shipments = try await store.sql(
                "SELECT id, placed, tracking, discount FROM \(table: TestOrder.self) WHERE id <= \(2) ORDER BY id",
                decoding: Shipment.self)
            let sample = TestOrder.sample
            #expect(
                shipments
                    == sample.prefix(2).map {
                        Shipment(id: $0.id, placed: $0.placed, tracking: $0.tracking, discount: $0.discount)
                    })
            #expect(try await store.sql("SELECT count(*) FROM \(table: TestOrder.self)", decoding: Int.self) == [9])
            let raw = try await store.sql("SELECT id AS key FROM \(table: TestOrder.self) WHERE id = \(3)")
            #expect(raw.columns == ["key"])
            #expect(raw.rows == [[.integer(3)]])
        },
        ConformanceCase("hand-written SQL refuses bad identifiers and wrong decodes by name, and runs in transactions")
        {
            (store: any Store) async throws in
            let orders = try await store.seededOrders()
            guard let store = running(store) else { return }
            let injected = await #expect(throws: DepotError.self) {
                try await store.sql("SELECT * FROM \(identifier: "orders\" --")")
            }
            #expect(injected?.kind == .invalidQuery)
            let notAColumn = await #expect(throws: DepotError.self) {
                try await store.sql("SELECT \(column: \TestOrder.customer.count) FROM \(table: TestOrder.self)")
            }
            #expect(notAColumn?.kind == .invalidQuery)
            let missing = await #expect(throws: DepotError.self) {
                try await store.sql("SELECT id FROM \(table: TestOrder.self)", decoding: Shipment.self)
            }
            #expect(missing?.kind == .decodingFailed)
            #expect(missing?.column == "placed")
            let wrong = await #expect(throws: DepotError.self) {
                try await store.sql("SELECT customer AS id FROM \(table: TestOrder.self)", decoding: Int.self)
            }
            #expect(wrong?.kind == .decodingFailed)
            let seen = try await store.write { tx in
                try await tx.repository(TestOrder.self).remove(where: \.customer == "ada")
                return try await tx.sql("SELECT count(*) FROM \(table: TestOrder.self)", decoding: Int.self)
            }
            #expect(seen == [6], "a transaction's statement sees its writes")
            #expect(try await orders.count() == 6)
        },
        ConformanceCase("an observed hand-written statement runs again after a commit to a table it names") {
            (store: any Store) async throws in
            let orders = try await store.seededOrders()
            guard let store = running(store) else { return }
            let observation = store.observe(
                sql: "SELECT * FROM \(table: TestOrder.self) WHERE quantity > \(5) ORDER BY id", as: TestOrder.self)
            var iterator = observation.makeAsyncIterator()
            #expect(try await iterator.next()?.map(\.id) == [3, 6])
            try await orders.update(where: \.id == 1, set: \.quantity, to: 50)
            #expect(try await iterator.next()?.map(\.id) == [1, 3, 6])
        },
        ConformanceCase("a per-dialect statement spliced into another keeps its own text on every dialect") {
            (store: any Store) async throws in
            let orders = try await store.seededOrders()
            guard let store = running(store) else { return }
            let clause = SQL(
                sqlite: "WHERE \(column: \TestOrder.id) = \(1)", postgres: "WHERE \(column: \TestOrder.id) = \(1)")
            let removed = try await store.write { tx in
                try await tx.sql("DELETE FROM \(table: TestOrder.self) \(clause) RETURNING id", decoding: Int.self)
            }
            #expect(removed == [1], "only the row the spliced WHERE names is deleted")
            #expect(try await orders.count() == 8)
            // Spliced after a fork, and followed by shared text.
            let customer = SQL(sqlite: "customer = \("ada")", postgres: "customer = \("ada")")
            let positive = SQL(sqlite: "quantity > \(0)", postgres: "quantity > \(0)")
            let both = try await store.sql(
                "SELECT id FROM \(table: TestOrder.self) WHERE \(customer) AND \(positive) AND id > \(1) ORDER BY id",
                decoding: Int.self)
            let expected = try await orders.fetch(
                where: \.customer == "ada" && \.quantity > 0 && \.id > 1, orderBy: [.ascending(\.id)])
            #expect(!expected.isEmpty)
            #expect(both == expected.map(\.id))
            let summed = try await store.sql(
                "SELECT id FROM \(table: TestOrder.self) " + SQL(sqlite: "WHERE id = 2", postgres: "WHERE id = 2"),
                decoding: Int.self)
            #expect(summed == [2])
        },
        ConformanceCase("an empty list: IN matches no row, NOT IN every row, whatever the column's type") {
            (store: any Store) async throws in
            let orders = try await store.seededOrders()
            guard let store = running(store) else { return }
            let all = try await orders.count()
            func count(_ statement: SQL) async throws -> Int {
                try await store.sql(statement, decoding: Int.self).first ?? -1
            }
            let table: SQL = "SELECT count(*) FROM \(table: TestOrder.self) WHERE "
            #expect(try await count(table + "customer NOT IN \(list: [String]())") == all)
            #expect(try await count(table + "customer IN \(list: [String]())") == 0)
            #expect(try await count(table + "id NOT IN \(list: [Int]())") == all)
            #expect(try await count(table + "discount NOT IN \(list: [Int?]())") == all, "NULL NOT IN () is true")
            #expect(try await count(table + "tracking NOT IN \(list: [UUID]())") == all)
            #expect(try await count(table + "placed NOT IN \(list: [Date]())") == all)
            #expect(try await count(table + "total NOT IN \(list: [Decimal]())") == all)
            #expect(try await count(table + "weight IN \(list: [Double]())") == 0)
            #expect(try await count(table + "NOT (id IN \(list: [Int]()))") == all)
        },
        ConformanceCase("a hand-written write inside a transaction is announced to the store's observers") {
            (store: any Store) async throws in
            let orders = try await store.seededOrders()
            guard let store = running(store) else { return }
            var iterator = orders.observe(where: \.quantity > 5, orderBy: [.ascending(\.id)]).makeAsyncIterator()
            #expect(try await iterator.next()?.map(\.id) == [3, 6])
            try await store.write { tx in
                _ = try await tx.sql("UPDATE \(table: TestOrder.self) SET quantity = 50 WHERE id = \(1)")
            }
            #expect(try await iterator.next()?.map(\.id) == [1, 3, 6])
            try await store.write { tx in
                _ = try await tx.sql("DELETE FROM orders WHERE id = \(3)")
            }
            #expect(try await iterator.next()?.map(\.id) == [1, 6], "a table named in plain text too")
        },
        ConformanceCase("a hand-written statement outside a transaction only reads: a write is refused on every store")
        {
            (store: any Store) async throws in
            let orders = try await store.seededOrders()
            guard let store = running(store) else { return }
            let before = try await orders.fetch()
            for statement: SQL in [
                "DELETE FROM \(table: TestOrder.self)",
                "UPDATE \(table: TestOrder.self) SET quantity = 0",
                "INSERT INTO \(table: TestOrder.self) SELECT * FROM \(table: TestOrder.self) WHERE id = \(1)",
            ] {
                let refused = await #expect(throws: DepotError.self) { try await store.sql(statement) }
                #expect(refused?.kind == .invalidQuery)
                #expect(refused?.message.contains("store.write") == true, "\(String(describing: refused))")
                // Decoded as entities, the statement runs inside a SELECT, where no engine takes a write.
                await #expect(throws: DepotError.self) {
                    try await store.sql(statement + " RETURNING *", as: TestOrder.self)
                }
            }
            #expect(try await orders.fetch() == before, "nothing was written")
        },
    ]
}
