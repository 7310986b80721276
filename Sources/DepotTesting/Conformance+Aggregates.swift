import Depot
import Foundation
import Testing

extension Store {
    /// The sample orders, stored.
    func seededOrders() async throws -> Repository<TestOrder> {
        let orders = repository(TestOrder.self)
        try await orders.insert(TestOrder.sample)
        return orders
    }
}

/// Byte order of text, as stores order it.
private func bytewise(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }

/// The bytes of a UUID, as stores order them.
private func bytes(_ uuid: UUID) -> [UInt8] { withUnsafeBytes(of: uuid.uuid) { Array($0) } }

extension StoreConformance {
    static let aggregateCases: [ConformanceCase] = [
        ConformanceCase("count, sum, average, min and max over a filter, NULLs ignored, decimals exact") {
            (store: any Store) async throws in
            let orders = try await store.seededOrders()
            let sample = TestOrder.sample
            let (count, discounted, quantity, discount, total, weight) = try await orders.aggregate(
                .count, .count(\.discount), .sum(\.quantity), .sum(\.discount), .sum(\.total), .sum(\.weight))
            #expect(count == sample.count)
            #expect(discounted == sample.filter { $0.discount != nil }.count)
            #expect(quantity == sample.map(\.quantity).reduce(0, +))
            #expect(discount == sample.compactMap(\.discount).reduce(0, +))
            #expect(total == sample.map(\.total).reduce(0, +), "decimal sums are exact")
            #expect(weight == sample.map(\.weight).reduce(0, +), "these doubles sum exactly in any order")
            let ada = sample.filter { $0.customer == "ada" }
            #expect(try await orders.sum(\.total, where: \.customer == "ada") == Decimal(string: "0.31"))
            #expect(try await orders.sum(\.quantity, where: \.customer == "ada") == ada.map(\.quantity).reduce(0, +))
            let mean = try await orders.average(\.quantity, where: \.customer == "ada")
            #expect(mean == Double(ada.map(\.quantity).reduce(0, +)) / Double(ada.count))
            #expect(try await orders.average(\.discount) == 11.0 / 5.0, "NULLs are not counted")
            #expect(try await orders.min(\.quantity) == -2)
            #expect(try await orders.max(\.quantity, where: \.region == "south") == 7)
            #expect(try await orders.max(\.discount, where: \.customer == "ada") == 1)
            #expect(try await orders.exists(where: \.customer == "bo"))
            #expect(!(try await orders.exists(where: \.customer == "nobody")))
        },
        ConformanceCase("min and max order as ORDER BY does: text by bytes, decimals by value, UUIDs by bytes") {
            (store: any Store) async throws in
            let orders = try await store.seededOrders()
            let sample = TestOrder.sample
            #expect(try await orders.min(\.customer) == sample.map(\.customer).min(by: bytewise))
            #expect(try await orders.max(\.customer) == "Örjan")
            #expect(try await orders.min(\.customer) == "Zed", "uppercase before lowercase")
            #expect(try await orders.max(\.total, where: \.id < 6) == Decimal(string: "10.5"), "not text order")
            #expect(try await orders.min(\.total) == Decimal(string: "-3.33"))
            #expect(try await orders.min(\.placed) == sample.map(\.placed).min())
            #expect(try await orders.max(\.placed) == sample.map(\.placed).max())
            let trackings = sample.compactMap(\.tracking)
            #expect(
                try await orders.max(\.tracking)
                    == trackings.max { bytes($0).lexicographicallyPrecedes(bytes($1)) })
            #expect(
                try await orders.min(\.tracking)
                    == trackings.min { bytes($0).lexicographicallyPrecedes(bytes($1)) })
            #expect(try await orders.min(\.region) == "north")
        },
        ConformanceCase("aggregates over no rows: count and sum 0, the others nil; also before the table exists") {
            (store: any Store) async throws in
            let orders = store.repository(TestOrder.self)
            for round in 0..<2 {
                let (count, quantity, total, weight, mean, lowest, highest) = try await orders.aggregate(
                    .count, .sum(\.quantity), .sum(\.total), .sum(\.weight), .average(\.weight), .min(\.customer),
                    .max(\.placed), where: \.customer == "nobody")
                #expect(count == 0 && quantity == 0 && total == 0 && weight == 0)
                #expect(mean == nil && lowest == nil && highest == nil)
                let nobody: Filter<TestOrder> = \.customer == "nobody"
                #expect(try await orders.group(by: \.region, computing: .count, where: nobody).isEmpty)
                #expect(try await orders.distinct(\.customer, where: nobody).isEmpty)
                #expect(!(try await orders.exists(where: nobody)))
                if round == 0 { try await orders.insert(TestOrder.sample) }
            }
            #expect(try await orders.average(\.discount, where: \.discount == nil) == nil, "only NULLs: no values")
            #expect(try await orders.sum(\.discount, where: \.discount == nil) == 0)
        },
        ConformanceCase("group by one and two columns: NULL is a group of its own, ordered by the groups") {
            (store: any Store) async throws in
            let orders = try await store.seededOrders()
            let sample = TestOrder.sample
            let regions = try await orders.group(by: \.region, computing: .count, .sum(\.total), .max(\.weight))
            #expect(regions.map(\.0) == [nil, "north", "south"], "NULL first, then byte order")
            for (region, count, total, weight) in regions {
                let rows = sample.filter { $0.region == region }
                #expect(count == rows.count)
                #expect(total == rows.map(\.total).reduce(0, +))
                #expect(weight == rows.map(\.weight).max())
            }
            let pairs = try await orders.group(by: \.customer, \.region, computing: .count)
            let expected = Dictionary(grouping: sample) { "\($0.customer)|\($0.region ?? "∅")" }
            #expect(pairs.count == expected.count)
            for (customer, region, count) in pairs {
                #expect(count == expected["\(customer)|\(region ?? "∅")"]?.count)
            }
            #expect(
                pairs.map(\.0) == pairs.map(\.0).sorted(by: bytewise), "ordered by the first grouping column first")
            let triples = try await orders.group(by: \.customer, \.region, \.discount, where: \.quantity > 0)
            let distinct = Set(
                sample.filter { $0.quantity > 0 }.map { "\($0.customer)|\($0.region ?? "")|\($0.discount ?? -1)" })
            #expect(triples.count == distinct.count)
        },
        ConformanceCase("having keeps groups by their aggregates; order by aggregates, then limit and offset") {
            (store: any Store) async throws in
            let orders = try await store.seededOrders()
            let busy = try await orders.group(
                by: \.customer, computing: .count, .sum(\.quantity), having: Aggregate.count >= 2,
                orderBy: [.descending(.sum(\.quantity))])
            #expect(busy.map(\.0) == ["Örjan", "Zed", "ada", "bo"])
            #expect(busy.map(\.2) == [14, 9, 9, -2], "ties ordered by the group, bytewise")
            let top = try await orders.group(
                by: \.customer, computing: .sum(\.total), having: Aggregate.sum(\.total) > Decimal(1),
                orderBy: [.ascending(.sum(\.total))], limit: 1, offset: 1)
            #expect(top.map(\.0) == ["Zed"])
            let quiet = try await orders.group(
                by: \.customer, computing: .max(\.discount),
                having: !(Aggregate.max(\.discount) > 1) || Aggregate.count == 3)
            #expect(quiet.map(\.0) == ["ada"])
            let high = try await orders.group(by: \.region, computing: .count, having: Aggregate.max(\.discount) > 1)
            #expect(high.map(\.0) == ["north", "south"])
            let low = try await orders.group(
                by: \.region, computing: .count, having: !(Aggregate.max(\.discount) > 1))
            #expect(low.isEmpty, "the NULL region's max is NULL: unknown, so neither it nor its negation holds")
            let byName = try await orders.group(
                by: \.customer, computing: .count, orderBy: [.descending(\.customer)], limit: 2)
            #expect(byName.map(\.0) == ["Örjan", "bo"])
            let grand = try await orders.aggregate(.count, where: \.quantity > 100)
            #expect(grand == 0)
        },
        ConformanceCase("distinct values of a column, NULL first, with a filter, limit and offset") {
            (store: any Store) async throws in
            let orders = try await store.seededOrders()
            #expect(try await orders.distinct(\.customer) == ["Zed", "ada", "bo", "Örjan"])
            #expect(try await orders.distinct(\.region) == [nil, "north", "south"])
            #expect(try await orders.distinct(\.region, where: \.customer == "ada") == ["north", "south"])
            #expect(try await orders.distinct(\.customer, limit: 2, offset: 1) == ["ada", "bo"])
            #expect(try await orders.distinct(\.discount).count == 6)
        },
        ConformanceCase("an integer sum beyond Int64 fails with .overflow naming the column") {
            (store: any Store) async throws in
            let orders = try await store.seededOrders()
            try await orders.insert(
                TestOrder(id: 100, customer: "big", quantity: Int.max - 1, total: 0, weight: 0, placed: Date()))
            #expect(try await orders.max(\.quantity) == Int.max - 1, "a large value alone is fine")
            let error = await #expect(throws: DepotError.self) { try await orders.sum(\.quantity) }
            #expect(error?.kind == .overflow)
            #expect(error?.column == "quantity")
            #expect(error?.message.contains("orders") == true)
            #expect(try await orders.sum(\.quantity, where: \.customer == "big") == Int.max - 1)
            // An average divides the exact sum, rounded once to a double: it never overflows.
            let quantities = (TestOrder.sample.map(\.quantity) + [Int.max - 1]).map { Int128($0) }
            let exact = Double(quantities.reduce(0, +)) / Double(quantities.count)
            #expect(try await orders.average(\.quantity) == exact)
        },
        ConformanceCase("an integer sum is exact whatever the rows' order: only the final sum must fit Int64") {
            (store: any Store) async throws in
            let orders = store.repository(TestOrder.self)
            func order(_ id: Int, _ quantity: Int) -> TestOrder {
                TestOrder(
                    id: id, customer: "c", quantity: quantity, total: 0, weight: 0,
                    placed: Date(timeIntervalSince1970: 0))
            }
            // Every order of insertion (and so, on every store, of summation) of each set of values.
            let sets: [[Int]] = [[Int.max, 1, -1], [Int.min, -1, 1], [Int.max, Int.max, Int.min, Int.min, 5]]
            for values in sets {
                let expected = values.map { Int128($0) }.reduce(0, +)
                var permutations: [[Int]] = [[]]
                for value in values {
                    permutations = permutations.flatMap { permutation in
                        (0...permutation.count).map {
                            var next = permutation; next.insert(value, at: $0); return next
                        }
                    }
                }
                for permutation in Set(permutations) {
                    _ = try await orders.removeAll()
                    try await orders.insert(permutation.enumerated().map { order($0.offset + 1, $0.element) })
                    #expect(Int128(try await orders.sum(\.quantity)) == expected, "sum of \(permutation)")
                    #expect(
                        try await orders.average(\.quantity) == Double(expected) / Double(values.count),
                        "average of \(permutation)")
                }
            }
            _ = try await orders.removeAll()
            try await orders.insert([order(1, Int.max), order(2, 1)])
            let beyond = await #expect(throws: DepotError.self) { try await orders.sum(\.quantity) }
            #expect(beyond?.kind == .overflow, "a final sum beyond Int64 fails")
            #expect(try await orders.average(\.quantity) == (Double(Int.max) + 1) / 2)
        },
        ConformanceCase("a floating-point sum or average that is not finite fails with .overflow on every store") {
            (store: any Store) async throws in
            let orders = try await store.seededOrders()
            func order(_ id: Int, _ weight: Double) -> TestOrder {
                TestOrder(id: id, customer: "c\(id)", quantity: 1, total: 0, weight: weight, placed: Date())
            }
            try await orders.insert([
                order(100, .greatestFiniteMagnitude), order(101, .greatestFiniteMagnitude), order(102, .infinity),
                order(103, -.infinity),
            ])
            let cases: [(Filter<TestOrder>, String)] = [
                (\.id == 100 || \.id == 101, "beyond the largest double"), (\.id == 102, "infinity"),
                (\.id == 102 || \.id == 103, "infinity minus infinity"),
            ]
            for (filter, what) in cases {
                let sum = await #expect(throws: DepotError.self, "sum of \(what)") {
                    try await orders.sum(\.weight, where: filter)
                }
                #expect(sum?.kind == .overflow, "sum of \(what)")
                #expect(sum?.column == "weight")
                let mean = await #expect(throws: DepotError.self, "average of \(what)") {
                    try await orders.average(\.weight, where: filter)
                }
                #expect(mean?.kind == .overflow, "average of \(what)")
            }
            #expect(try await orders.max(\.weight) == .infinity, "min and max of infinities are fine")
            #expect(try await orders.sum(\.weight, where: \.id == 100) == .greatestFiniteMagnitude)
        },
        ConformanceCase("aggregates a column's type does not define are refused with .invalidQuery naming it") {
            (store: any Store) async throws in
            _ = try await store.seededOrders()
            let table = TestOrder.schema.table
            for term in [
                AggregateTerm(.sum, "customer"), AggregateTerm(.average, "total"), AggregateTerm(.min, nil),
                AggregateTerm(.max, "nope"),
            ] {
                let error = await #expect(throws: DepotError.self) {
                    try await store.aggregate(AggregateQuery(table: table, aggregates: [term]))
                }
                #expect(error?.kind == .invalidQuery)
            }
            let ordered = await #expect(throws: DepotError.self) {
                try await store.aggregate(
                    AggregateQuery(
                        table: table, groupBy: ["customer"], aggregates: [],
                        ordering: [.group("region", descending: false)]))
            }
            #expect(ordered?.kind == .invalidQuery)
            #expect(ordered?.column == "region")
            let negative = await #expect(throws: DepotError.self) {
                try await store.aggregate(AggregateQuery(table: table, aggregates: [.init(.count, nil)], limit: -1))
            }
            #expect(negative?.kind == .invalidQuery)
        },
        ConformanceCase("select returns only the asked columns, in their order, filtered and ordered by others") {
            (store: any Store) async throws in
            let airports = store.repository(TestAirport.self)
            #expect(try await airports.select(\.icao).isEmpty, "before the table exists")
            try await airports.insert(TestAirport.sample)
            let all = try await airports.fetchAll()
            #expect(try await airports.select(\.icao) == all.map(\.icao))
            let pairs = try await airports.select(
                \.name, \.iata, where: \.country == "NO", orderBy: [.descending(\.elevation)], limit: 3, offset: 1)
            let expected = all.filter { $0.country == "NO" }.sorted { $0.elevation > $1.elevation }.dropFirst().prefix(
                3)
            #expect(pairs.map(\.0) == expected.map(\.name))
            #expect(pairs.map(\.1) == expected.map(\.iata), "NULLs come back as nil")
            let four = try await airports.select(\.longitude, \.latitude, \.city, \.icao, where: \.icao == "ENGM")
            #expect(four.count == 1)
            #expect(four.first?.3 == "ENGM" && four.first?.2 == "Oslo" && four.first?.1 == 60.193901)
            struct Label: Equatable { var code: String; var high: Bool }
            let labels = try await airports.select(\.icao, \.elevation, where: \.country == "PL") { code, elevation in
                Label(code: code, high: elevation > 100)
            }
            #expect(labels == [Label(code: "EPPO", high: true)])
            var projected = SelectQuery(table: TestAirport.schema.table, predicate: (\TestAirport.country == "PL").node)
            projected.columns = ["name", "icao"]
            let raw = try await store.fetch(projected) { $0 }
            #expect(raw == [[.text("Poznań-Ławica Airport"), .text("EPPO")]], "fetch reads a projection's width")
            let readings = store.repository(Reading.self)
            try await readings.insert([
                Reading(station: "B", sequence: 2, value: 1), Reading(station: "A", sequence: 1, value: nil),
                Reading(station: "B", sequence: 1, value: 3),
            ])
            let values = try await readings.select(\.value)
            #expect(values == [nil, 3, 1], "in key order (station, sequence)")
            let inTransaction = try await store.write { tx in
                try await tx.repository(TestAirport.self).insert(
                    TestAirport(icao: "ZZZZ", name: "New", country: "NO"))
                return try await tx.repository(TestAirport.self).select(\.icao, where: \.name == "New")
            }
            #expect(inTransaction == ["ZZZZ"], "a transaction's reads see its writes")
        },
    ]
}
