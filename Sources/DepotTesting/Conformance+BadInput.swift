import Depot
import Testing

extension StoreConformance {
    static let badInputCases: [ConformanceCase] = [
        ConformanceCase("a key path that is not a column fails each call with .invalidQuery naming it, writing nothing")
        {
            (store: any Store) async throws in
            let airports = try await store.seededAirports()
            // `name.count` compiles (an Int is storable) but is no column of the schema.
            let notAColumn: Filter<TestAirport> = \.name.count > 5
            await expectNotAColumn("fetch") { _ = try await airports.fetch(where: notAColumn) }
            await expectNotAColumn("count") { _ = try await airports.count(where: notAColumn) }
            await expectNotAColumn("first") { _ = try await airports.first(where: \.icao == "ENGM" && notAColumn) }
            await expectNotAColumn("order") { _ = try await airports.fetch(orderBy: [.ascending(\.name.count)]) }
            await expectNotAColumn("remove") { _ = try await airports.remove(where: notAColumn) }
            await expectNotAColumn("replace") { try await airports.replace(where: notAColumn, with: []) }
            await expectNotAColumn("patch") {
                try await airports.apply([Patch<TestAirport>(key: "ENGM").set(\.name.count, 3)])
            }
            await expectNotAColumn("observe") {
                for try await _ in airports.observe(where: notAColumn) { break }
            }
            await expectNotAColumn("batches") {
                for try await _ in airports.batches(of: 2, where: notAColumn) { break }
            }
            #expect(
                try await airports.fetch()
                    == TestAirport.sample.sorted { $0.icao.utf8.lexicographicallyPrecedes($1.icao.utf8) })
        },
        ConformanceCase("reading a relation the fetch did not include throws .invalidQuery naming it") {
            (store: any Store) async throws in
            try await store.seededRelations()
            let airports = try await store.repository(RelAirport.self).fetch(
                where: \.icao == "ENGM", including: [RelAirport.runways])
            let oslo = try #require(airports.first)
            #expect(try oslo[RelAirport.runways].count == 2)
            let error = #expect(throws: DepotError.self) { _ = try oslo[RelAirport.pilots] }
            #expect(error?.kind == .invalidQuery)
            #expect(
                error?.message.contains("was not included in the fetch of RelAirport") == true,
                "\(error?.message ?? "")")
        },
        ConformanceCase("a store writer refuses a malformed batch (partial rows, a column twice) and writes nothing") {
            (store: any Store) async throws in
            let table = Reading.schema.table
            try await store.transaction { writer in
                let partial = RowBatch(
                    columns: ["station", "sequence", "value"],
                    values: [.text("a"), .integer(1), .null, .text("b"), .integer(2)])
                let shape = await #expect(throws: DepotError.self) {
                    try await writer.write(partial, into: table, mode: .insert)
                }
                #expect(shape?.kind == .invalidQuery)
                #expect(shape?.message.contains("do not fill rows of 3 columns") == true, "\(shape?.message ?? "")")
                let twice = RowBatch(
                    columns: ["station", "sequence", "station"], values: [.text("a"), .integer(1), .text("b")])
                let repeated = await #expect(throws: DepotError.self) {
                    try await writer.write(twice, into: table, mode: .upsert)
                }
                #expect(
                    repeated?.message.contains("names column 'station' twice") == true, "\(repeated?.message ?? "")")
            }
            #expect(try await store.repository(Reading.self).count() == 0)
        },
        ConformanceCase("a JSON value whose encode(to:) throws fails the write with .encodingFailed, writing nothing") {
            (store: any Store) async throws in
            let gadgets = store.repository(Gadget.self)
            let good = Gadget(id: 1, settings: Settings(level: 3), extra: nil)
            let bad = Gadget(id: 2, settings: Settings(level: -1), extra: nil)
            let insert = await #expect(throws: DepotError.self) { try await gadgets.insert([good, bad]) }
            #expect(insert?.kind == .encodingFailed)
            #expect(
                insert?.message.contains("column settings of conformance_gadgets row 2") == true,
                "\(insert?.message ?? "")")
            #expect(insert?.message.contains("negative level -1") == true, "\(insert?.message ?? "")")
            #expect(try await gadgets.count() == 0, "the failing batch wrote nothing")
            // An optional JSON column, through upsert.
            let optional = await #expect(throws: DepotError.self) {
                try await gadgets.upsert(Gadget(id: 3, settings: Settings(level: 1), extra: Settings(level: -2)))
            }
            #expect(optional?.message.contains("column extra of conformance_gadgets row 3") == true)
            // A patch assigning such a value.
            try await gadgets.insert(good)
            let patch = await #expect(throws: DepotError.self) {
                try await gadgets.apply([Patch<Gadget>(key: 1).set(\.settings, Settings(level: -5))])
            }
            #expect(patch?.kind == .encodingFailed)
            #expect(
                patch?.message.contains("column settings cannot be stored as JSON") == true, "\(patch?.message ?? "")")
            #expect(try await gadgets.fetch() == [good])
            // A value that encodes as JSON null on purpose is stored as such.
            try await gadgets.upsert(Gadget(id: 4, settings: Settings(level: 0), extra: nil))
            #expect(try await gadgets.find(4)?.settings == Settings(level: 0))
        },
        ConformanceCase("the largest limit with an offset pages like any limit (no overflow)") {
            (store: any Store) async throws in
            let airports = try await store.seededAirports()
            let all = try await airports.fetch()
            #expect(try await airports.fetch(limit: .max, offset: 1) == Array(all.dropFirst()))
            #expect(try await airports.fetch(limit: .max, offset: .max).isEmpty)
            #expect(try await airports.count(where: nil) == all.count)
            #expect(try await airports.first(orderBy: [.descending(\.icao)]) == all.last)
        },
    ]
}

/// Expects `body` to fail with `.invalidQuery` saying a key path is not a column of TestAirport.
private func expectNotAColumn(_ call: String, _ body: () async throws -> Void) async {
    let error = await #expect(throws: DepotError.self) { try await body() }
    #expect(error?.kind == .invalidQuery, "\(call)")
    #expect(
        error?.message.contains("is not a column of TestAirport") == true, "\(call): \(error?.message ?? "")")
    #expect(error?.message.contains("\u{0}") == false, "\(call)")
}

/// An entity with JSON columns whose values may refuse to encode.
struct Gadget: Entity, Equatable {
    var id: Int
    var settings: Settings
    var extra: Settings?

    static let schema = Schema<Gadget>("conformance_gadgets", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.settings, "settings")
        Column(\.extra, "extra")
    }
}

/// JSON settings: a negative level refuses to encode; level 0 encodes as JSON `null`.
struct Settings: Equatable, StorableAsJSON {
    var level: Int

    init(level: Int) { self.level = level }

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        level = container.decodeNil() ? 0 : try container.decode(Int.self)
    }

    func encode(to encoder: any Encoder) throws {
        if level < 0 {
            throw EncodingError.invalidValue(
                level, .init(codingPath: encoder.codingPath, debugDescription: "negative level \(level)"))
        }
        var container = encoder.singleValueContainer()
        if level == 0 { try container.encodeNil() } else { try container.encode(level) }
    }
}
