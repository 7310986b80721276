import Depot
import Foundation
import Testing

extension StoreConformance {
    static let updateCases: [ConformanceCase] = [
        ConformanceCase("update(where:set:) assigns values and column expressions to every matching row, once") {
            (store: any Store) async throws in
            let orders = try await store.seededOrders()
            let before = try await orders.fetchAll()
            let cent = Decimal(sign: .plus, exponent: -2, significand: 1)
            let changed = try await orders.update(
                where: \.customer == "ada",
                set: [
                    .set(\.region, to: nil), .set(\.quantity, to: \.quantity + 10),
                    .set(\.discount, to: \.discount - 1),
                    .set(\.total, to: \.total + cent), .set(\.weight, to: \.weight - 0.25),
                ])
            #expect(changed == before.filter { $0.customer == "ada" }.count)
            let after = try await orders.fetchAll()
            for (old, new) in zip(before, after) {
                guard old.customer == "ada" else {
                    #expect(new == old, "a row that does not match is untouched")
                    continue
                }
                #expect(new.region == nil)
                #expect(new.quantity == old.quantity + 10)
                #expect(new.discount == old.discount.map { $0 - 1 }, "NULL minus a number stays NULL")
                #expect(new.total == old.total + cent, "decimals add exactly")
                #expect(new.weight == old.weight - 0.25)
                #expect(new.placed == old.placed && new.tracking == old.tracking, "columns not assigned are kept")
            }
            #expect(try await orders.update(where: \.customer == "nobody", set: \.quantity, to: 0) == 0)
            let all = try await orders.update(set: \.customer, to: "everyone")
            #expect(all == before.count)
            #expect(try await orders.distinct(\.customer) == ["everyone"])
            #expect(try await store.repository(TestAirport.self).update(set: \.name, to: "x") == 0, "no table yet")
        },
        ConformanceCase("an update is announced to observers like any write, and undone with its transaction") {
            (store: any Store) async throws in
            let orders = try await store.seededOrders()
            var commits = store.commits().makeAsyncIterator()
            try await orders.update(where: \.id == 1, set: \.quantity, to: 99)
            let commit = await commits.nextNamed()
            #expect(commit?.tables.contains(TestOrder.schema.table.name) == true)
            struct Undo: Error {}
            await #expect(throws: Undo.self) {
                try await store.write { tx in
                    try await tx.repository(TestOrder.self).update(set: \.quantity, to: \.quantity + 1)
                    #expect(try await tx.repository(TestOrder.self).find(1)?.quantity == 100, "seen inside")
                    throw Undo()
                }
            }
            #expect(try await orders.find(1)?.quantity == 99)
        },
        ConformanceCase("a bad update fails before writing: keys, NULL in NOT NULL, overflow, twice the same column") {
            (store: any Store) async throws in
            let orders = try await store.seededOrders()
            let before = try await orders.fetchAll()
            let key = await #expect(throws: DepotError.self) { try await orders.update(set: \.id, to: 5) }
            #expect(key?.kind == .invalidQuery)
            #expect(key?.column == "id")
            let twice = await #expect(throws: DepotError.self) {
                try await orders.update(set: [.set(\.quantity, to: 1), .set(\.quantity, to: 2)])
            }
            #expect(twice?.kind == .invalidQuery)
            let none = await #expect(throws: DepotError.self) { try await orders.update(set: []) }
            #expect(none?.kind == .invalidQuery)
            try await orders.insert(
                TestOrder(
                    id: 50, customer: "max", quantity: Int.max - 1, total: 0, weight: .greatestFiniteMagnitude,
                    placed: Date()))
            let overflow = await #expect(throws: DepotError.self) {
                try await orders.update(set: [.set(\.region, to: "changed"), .set(\.quantity, to: \.quantity + 5)])
            }
            #expect(overflow?.kind == .overflow)
            #expect(overflow?.column == "quantity")
            let doubles = await #expect(throws: DepotError.self) {
                try await orders.update(where: \.id == 50, set: \.weight, to: \.weight + .greatestFiniteMagnitude)
            }
            #expect(doubles?.kind == .overflow)
            let minimum = await #expect(throws: DepotError.self) {
                try await orders.update(set: \.quantity, to: \.quantity - Int.min)
            }
            #expect(minimum?.kind == .overflow)
            let infinite = await #expect(throws: DepotError.self) {
                try await orders.update(set: \.weight, to: \.weight + .infinity)
            }
            #expect(infinite?.kind == .invalidQuery, "only finite numbers are added")
            #expect(try await orders.fetch(where: \.id != 50) == before, "nothing was written")
            #expect(try await orders.count(where: \.region == "changed") == 0)
        },
        ConformanceCase("an update of a ToOne key must name a stored row; computing one is refused") {
            (store: any Store) async throws in
            try await store.seededRelations()
            let airports = store.repository(RelAirport.self)
            let before = try await airports.fetchAll()
            let missing = await #expect(throws: DepotError.self) {
                try await airports.update(where: \.country == "NO", set: \.country, to: "XX")
            }
            #expect(missing?.kind == .constraintViolation)
            #expect(missing?.column == "country")
            #expect(try await airports.fetchAll() == before)
            let moved = try await airports.update(where: \.country == "NO", set: \.country, to: "IS")
            #expect(moved == before.filter { $0.country == "NO" }.count)
            #expect(try await airports.count(where: \.country == "NO") == 0)
            let pilots = store.repository(RelPilot.self)
            #expect(try await pilots.update(set: \.base, to: nil) == (try await pilots.count()), "NULL names nothing")
        },
    ]
}
