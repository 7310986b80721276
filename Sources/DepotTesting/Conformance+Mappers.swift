import Depot
import Foundation
import Testing

/// A domain model kept apart from its stored record.
struct AirportModel: Sendable, Equatable {
    var code: String
    var title: String
    var countryCode: String
}

struct AirportModelMapper: WritableDomainMapper {
    func model(from entity: Loaded<TestAirport>) throws -> AirportModel {
        AirportModel(code: entity.icao, title: entity.name, countryCode: entity.country)
    }
    func entity(from model: AirportModel) throws -> TestAirport {
        TestAirport(icao: model.code, name: model.title, country: model.countryCode)
    }
}

/// An API-like source model.
struct AirportPayload: Sendable {
    var id: String
    var displayName: String
}

struct PayloadMapper: PersistMapper {
    func entity(from source: AirportPayload) throws -> TestAirport {
        TestAirport(icao: source.id, name: source.displayName, country: "ZZ")
    }
}

/// Renames stored airports in place, creating the missing ones.
struct RenameMapper: UpdateMapper {
    var match: Match<AirportPayload, TestAirport> { Match(\.id, \.icao) }
    func makeEntity(from source: AirportPayload) throws -> TestAirport {
        TestAirport(icao: source.id, name: source.displayName, country: "NEW")
    }
    func update(_ entity: inout TestAirport, from source: AirportPayload) throws {
        entity.name = source.displayName
    }
}

/// Adds to an airport's elevation: a read-modify-write that loses updates unless rows are locked.
package struct ClimbMapper: UpdateMapper {
    package init() {}
    package var match: Match<String, TestAirport> { Match(\.self, \.icao) }
    package func makeEntity(from source: String) throws -> TestAirport {
        TestAirport(icao: source, name: "climb", country: "ZZ", elevation: 1)
    }
    package func update(_ entity: inout TestAirport, from source: String) throws { entity.elevation += 1 }
}

extension StoreConformance {
    static let mapperCases: [ConformanceCase] = [
        ConformanceCase("UpdateMapper calls running side by side lose no update, also on keys not stored yet") {
            (store: any Store) async throws in
            let airports = store.repository(TestAirport.self)
            try await airports.insert(TestAirport(icao: "OLD1", name: "climb", country: "ZZ", elevation: 0))
            // 16 callers at once: each adds 1 to a stored row and to one none has stored yet.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<16 {
                    group.addTask { try await airports.persist(["OLD1", "NEW1"], mapper: ClimbMapper()) }
                }
                try await group.waitForAll()
            }
            #expect(try await airports.find("OLD1")?.elevation == 16)
            #expect(try await airports.find("NEW1")?.elevation == 16)
        },
        ConformanceCase("a domain-mapped repository reads and writes models") { (store: any Store) async throws in
            _ = try await store.seededAirports()
            let models = store.repository(TestAirport.self).mapped(by: AirportModelMapper())
            let norwegian = try await models.fetch(where: \.country == "NO", orderBy: [.ascending(\.name)])
            #expect(norwegian.map(\.title).first == "Bergen Airport Flesland")
            try await models.upsert(AirportModel(code: "MMMM", title: "Model", countryCode: "XX"))
            #expect(try await models.find("MMMM") == AirportModel(code: "MMMM", title: "Model", countryCode: "XX"))
            #expect(try await models.count(where: \.country == "XX") == 1)
        },
        ConformanceCase("a persist mapper upserts by primary key from another model") {
            (store: any Store) async throws in
            let airports = try await store.seededAirports()
            try await airports.persist(
                [AirportPayload(id: "ENGM", displayName: "Oslo"), AirportPayload(id: "XNEW", displayName: "New")],
                mapper: PayloadMapper())
            #expect(try await airports.find("ENGM")?.name == "Oslo")
            #expect(try await airports.find("ENGM")?.country == "ZZ")
            #expect(try await airports.find("XNEW")?.name == "New")
        },
        ConformanceCase("an update mapper merges into stored rows and keeps their other fields") {
            (store: any Store) async throws in
            let airports = try await store.seededAirports()
            try await airports.persist(
                [
                    AirportPayload(id: "ENGM", displayName: "Oslo"), AirportPayload(id: "XNEW", displayName: "New"),
                    AirportPayload(id: "ENGM", displayName: "Oslo lufthavn"),
                ],
                mapper: RenameMapper())
            var expected = TestAirport.sample[0]
            expected.name = "Oslo lufthavn"
            #expect(try await airports.find("ENGM") == expected)
            #expect(try await airports.find("XNEW")?.country == "NEW")
            #expect(try await airports.count() == 11)
        },
        ConformanceCase("an update mapper matches by a unique column that is not the key and returns rows as stored") {
            (store: any Store) async throws in
            let users = store.repository(MapUser.self)
            let first = try await users.persist(
                [MapUserResponse(identifier: "u1", name: "Ada"), MapUserResponse(identifier: "u2", name: "Alan")],
                mapper: MapUserMapper())
            #expect(first.map(\.remoteID) == ["u1", "u2"])
            #expect(first.map(\.name) == ["Ada", "Alan"])
            #expect(try await users.fetch(orderBy: [.ascending(\.remoteID)]) == first)
            // Matched again by remote_id: the local keys stay, the rows change in place.
            let second = try await users.persist(
                [
                    MapUserResponse(identifier: "u2", name: "Alan T.", isOnline: true),
                    MapUserResponse(identifier: "u3", name: "Grace"),
                    MapUserResponse(identifier: "u2", name: "Alan Turing", kind: "bot"),
                ],
                mapper: MapUserMapper())
            #expect(second.map(\.id)[0] == first[1].id)
            #expect(second[0] == second[2])
            #expect(second[0].name == "Alan Turing" && second[0].kind == "bot" && second[0].isOnline == true)
            #expect(try await users.count() == 3)
            #expect(try await users.first(where: \.remoteID == "u2") == second[0])
        },
        ConformanceCase("an update mapper matches by two columns unique together") { (store: any Store) async throws in
            let tags = store.repository(MapTag.self)
            func tag(_ scope: String, _ name: String) -> MapTag {
                MapTag(id: UUID(), scope: scope, name: name, uses: 0)
            }
            let made = try await tags.persist([tag("a", "x"), tag("a", "y"), tag("b", "x")], mapper: MapTagMapper())
            let again = try await tags.persist(
                [tag("b", "x"), tag("a", "x"), tag("b", "y"), tag("a", "x")], mapper: MapTagMapper())
            #expect(again[0].id == made[2].id && again[0].uses == 2)
            #expect(again[1].id == made[0].id && again[1].uses == 3 && again[3] == again[1])
            #expect(again[2].uses == 1)
            let stored = try await tags.fetch(orderBy: [.ascending(\.scope), .ascending(\.name)])
            #expect(stored.map { "\($0.scope)\($0.name)\($0.uses)" } == ["ax3", "ay1", "bx2", "by1"])
        },
        ConformanceCase(
            "a match that is neither the key nor unique, or an entity without the matched value, is refused"
        ) {
            (store: any Store) async throws in
            let users = store.repository(MapUser.self)
            let byName = await #expect(throws: DepotError.self) {
                try await users.persist([MapUserResponse(identifier: "u1", name: "Ada")], mapper: MapUserByNameMapper())
            }
            #expect(byName?.kind == .invalidQuery)
            #expect(byName?.message.contains("(name)") == true)
            let forgetful = await #expect(throws: DepotError.self) {
                try await users.persist([MapUserResponse(identifier: "u1", name: "Ada")], mapper: MapForgetfulMapper())
            }
            #expect(forgetful?.kind == .mappingFailed)
            #expect(forgetful?.message.contains("remote_id") == true)
            #expect(try await users.count() == 0)
        },
        ConformanceCase("nested mappers store a to-one before and an ordered to-many after their parents, in one call")
        {
            (store: any Store) async throws in
            let users = store.repository(MapUser.self)
            let avatar = MapImageResponse(url: "https://img/1", width: 64, height: 64)
            let ada = MapUserResponse(
                identifier: "u1", name: "Ada", image: avatar,
                posts: [MapPostResponse(id: "p1", title: "Notes"), MapPostResponse(id: "p2", title: "Engine")])
            let alan = MapUserResponse(
                identifier: "u2", name: "Alan", image: avatar, posts: [MapPostResponse(id: "p3", title: "Machines")])
            let stored = try await users.persist([ada, alan], mapper: MapUserMapper())
            #expect(stored.map(\.imageURL) == ["https://img/1", "https://img/1"])
            #expect(
                try await store.repository(MapImage.self).fetch() == [
                    MapImage(url: "https://img/1", width: 64, height: 64)
                ])
            let posts = store.repository(MapPost.self)
            let written = try await posts.fetch(orderBy: [.ascending(\.id)])
            #expect(written.map(\.authorID) == [stored[0].id, stored[0].id, stored[1].id])
            #expect(written.map(\.position) == [1, 2, 1])
            // Again: Ada's list is now p2 then p4 (p1 is removed, p2 moves first); Alan sends no
            // image (his column is kept) and no posts (his are removed).
            var adaAgain = ada
            adaAgain.image = MapImageResponse(url: "https://img/2", width: 32, height: 32)
            adaAgain.posts = [MapPostResponse(id: "p2", title: "Engine"), MapPostResponse(id: "p4", title: "Loops")]
            var alanAgain = alan
            alanAgain.image = nil
            alanAgain.posts = []
            let again = try await users.persist([adaAgain, alanAgain], mapper: MapUserMapper())
            #expect(again.map(\.id) == stored.map(\.id))
            #expect(again.map(\.imageURL) == ["https://img/2", "https://img/1"])
            let rewritten = try await posts.fetch(orderBy: [.ascending(\.id)])
            #expect(rewritten.map(\.id) == ["p2", "p4"])
            #expect(rewritten.map(\.position) == [1, 2])
            #expect(try await store.repository(MapImage.self).count() == 2)
        },
        ConformanceCase("an error in a nested mapper writes nothing, not even the rows mapped before it") {
            (store: any Store) async throws in
            let users = store.repository(MapUser.self)
            let response = MapUserResponse(
                identifier: "u1", name: "Ada", image: MapImageResponse(url: "https://img/1", width: 1, height: 1),
                posts: [MapPostResponse(id: "p1", title: "fine"), MapPostResponse(id: "p2", title: "boom")])
            let error = await #expect(throws: DepotError.self) {
                try await users.persist([response], mapper: MapUserMapper())
            }
            #expect(error?.kind == .mappingFailed)
            #expect(error?.underlying is MapPostMapper.Boom)
            #expect(try await users.count() == 0)
            #expect(try await store.repository(MapImage.self).count() == 0)
            #expect(try await store.repository(MapPost.self).count() == 0)
        },
        ConformanceCase("a query object pages alike in fetch, first, count, exists, sections, observe and remove") {
            (store: any Store) async throws in
            let airports = try await store.seededAirports()
            let page = Query<TestAirport>(where: \.country == "NO").sorted(by: .descending(\.elevation)).limit(
                2, offset: 1)
            #expect(codes(try await airports.fetch(page)) == ["ENBR", "ENAL"])
            #expect(try await airports.first(page)?.icao == "ENBR")
            #expect(try await airports.count(page) == 2)
            #expect(try await airports.count(page.limit(5, offset: 3)) == 1)
            #expect(try await airports.exists(page))
            #expect(try await airports.first(page.limit(0)) == nil)
            #expect(try await airports.count(page.limit(0)) == 0)
            #expect(try await airports.sections(by: \.country, page).map { codes($0.items) } == [["ENBR", "ENAL"]])
            var lists = airports.observe(page).makeAsyncIterator()
            #expect(codes(try await lists.next() ?? []) == ["ENBR", "ENAL"])
            try await airports.insert(TestAirport(icao: "ENXX", name: "Five hundred", country: "NO", elevation: 500))
            #expect(codes(try await lists.next() ?? []) == ["ENXX", "ENBR"])
            #expect(try await airports.remove(page) == 2)
            #expect(
                codes(try await airports.fetch(where: \.country == "NO", orderBy: [.ascending(\.icao)])) == [
                    "ENAL", "ENGM", "ENZZ",
                ])
            #expect(try await airports.remove(Query(where: \.country == "PL")) == 1)
        },
        ConformanceCase("a mapped repository builds models from two tables, in persist, fetch, query and observe") {
            (store: any Store) async throws in
            let users = store.repository(MapUser.self).mapped(by: MapUserModelMapper())
            let ada = MapUserResponse(
                identifier: "u1", name: "Ada",
                posts: [MapPostResponse(id: "p2", title: "Engine"), MapPostResponse(id: "p1", title: "Notes")])
            let stored = try await users.persist(
                [ada, MapUserResponse(identifier: "u2", name: "Alan")], mapper: MapUserMapper())
            #expect(
                stored == [
                    MapUserModel(identifier: "u1", name: "Ada", posts: ["Engine", "Notes"]),
                    MapUserModel(identifier: "u2", name: "Alan", posts: []),
                ])
            #expect(try await users.fetch(orderBy: [.ascending(\.remoteID)]) == stored)
            #expect(try await users.first(Query(where: \.remoteID == "u2")) == stored[1])
            #expect(try await users.count(Query(where: \.name != "x")) == 2)
            var lists = users.observe(Query(where: \.remoteID == "u1")).makeAsyncIterator()
            #expect(try await lists.next() == [stored[0]])
            // A commit to the included table alone gives a new element.
            try await store.repository(MapPost.self).update(
                where: \.id == "p1", set: \.title, to: "Notes on the engine")
            #expect(
                try await lists.next() == [
                    MapUserModel(identifier: "u1", name: "Ada", posts: ["Engine", "Notes on the engine"])
                ])
            #expect(try await users.remove(Query(where: \.remoteID == "u1")) == 1)
            #expect(try await store.repository(MapPost.self).count() == 0)
        },
        ConformanceCase("code written against any ModelRepository reads, persists, observes and removes through it") {
            (store: any Store) async throws in
            let users: any ModelRepository<MapUserModel, MapUser> = store.repository(MapUser.self).mapped(
                by: MapUserModelMapper())
            let stored = try await users.persist(
                [
                    MapUserResponse(identifier: "u2", name: "Alan"),
                    MapUserResponse(identifier: "u1", name: "Ada", posts: [MapPostResponse(id: "p1", title: "Notes")]),
                ], mapper: MapUserMapper())
            #expect(stored.map(\.identifier) == ["u2", "u1"])
            #expect(try await users.fetch(orderBy: [.ascending(\.remoteID)]).map(\.identifier) == ["u1", "u2"])
            #expect(try await users.first(where: \.name == "Ada") == stored[1])
            #expect(try await users.exists(where: \.name == "Grace") == false)
            #expect(try await users.count(where: \.name != "x") == 2)
            let key = try #require(try await store.repository(MapUser.self).first(where: \.remoteID == "u2")?.id)
            #expect(try await users.find(key) == stored[0])
            var lists = users.observe(where: \.remoteID == "u1").makeAsyncIterator()
            #expect(try await lists.next() == [stored[1]])
            try await users.persist([MapUserResponse(identifier: "u1", name: "Ada L.")], mapper: MapUserMapper())
            #expect(try await lists.next()?.map(\.name) == ["Ada L."])
            #expect(try await users.remove(key))
            #expect(try await users.removeAll() == 1)
            #expect(try await lists.next() == [])
        },
        ConformanceCase("an upsert or persist that changes nothing counts none and announces nothing") {
            (store: any Store) async throws in
            let airports = try await store.seededAirports()
            var commits = store.commits().makeAsyncIterator()
            #expect(try await airports.upsert(TestAirport.sample) == 0)
            #expect(try await airports.upsert(TestAirport.sample[0]) == false)
            try await airports.persist(TestAirport.sample, mapper: Identity())
            // Patches: one lacking required columns (an update of stored rows), one of every column.
            let same = TestAirport.sample[0]
            #expect(try await airports.apply([Patch(key: same.icao).set(\.name, same.name)]) == 0)
            #expect(
                try await airports.apply([
                    Patch(key: same.icao).set(\.name, same.name).set(\.country, same.country)
                        .set(\.elevation, same.elevation)
                ]) == 0)
            let users = store.repository(MapUser.self)
            try await users.persist([MapUserResponse(identifier: "u1", name: "Ada")], mapper: MapUserMapper())
            // The first commit announced after the no-op calls is the users' insert.
            #expect(await commits.nextNamed()?.storeTables == [MapUser.schema.tableName])
            try await users.persist([MapUserResponse(identifier: "u1", name: "Ada")], mapper: MapUserMapper())
            var changed = TestAirport.sample
            changed[1].name = "Renamed"
            #expect(try await airports.upsert(changed) == 1)
            #expect(await commits.nextNamed()?.storeTables == [TestAirport.schema.tableName])
            #expect(try await airports.find(changed[1].icao) == changed[1])
            // A patch that changes one of two rows counts one.
            #expect(
                try await airports.apply([
                    Patch(key: same.icao).set(\.name, same.name), Patch(key: changed[1].icao).set(\.name, "Again"),
                ]) == 1)
            #expect(await commits.nextNamed()?.storeTables == [TestAirport.schema.tableName])
            #expect(try await airports.find(changed[1].icao)?.name == "Again")
        },
        ConformanceCase("a nested child's own nested list is stored too: users, posts, comments in one call") {
            (store: any Store) async throws in
            let users = store.repository(MapUser.self)
            func post(_ id: String, _ comments: [String]) -> MapPostResponse {
                MapPostResponse(
                    id: id, title: id, comments: comments.map { MapCommentResponse(id: "\(id)-\($0)", text: $0) })
            }
            let ada = MapUserResponse(
                identifier: "u1", name: "Ada", posts: [post("p1", ["a", "b"]), post("p2", ["c"])])
            _ = try await users.persist([ada], mapper: MapUserMapper())
            let comments = store.repository(MapComment.self)
            let first = try await comments.fetch(orderBy: [.ascending(\.id)])
            #expect(first.map { "\($0.postID):\($0.text)" } == ["p1:a", "p1:b", "p2:c"])
            var again = ada
            again.posts = [post("p1", ["b", "d"])]
            _ = try await users.persist([again], mapper: MapUserMapper())
            // p2 is removed with its comment (cascade); p1 keeps b, loses a, gains d.
            #expect(try await comments.fetch(orderBy: [.ascending(\.id)]).map(\.id) == ["p1-b", "p1-d"])
            #expect(try await store.repository(MapPost.self).count() == 1)
        },
        ConformanceCase("update mappers matching by a unique column side by side make one row, not a duplicate") {
            (store: any Store) async throws in
            let users = store.repository(MapUser.self)
            // 8 callers at once persist the same new user: one inserts, the others find it and update.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for caller in 0..<8 {
                    group.addTask {
                        _ = try await users.persist(
                            [MapUserResponse(identifier: "u1", name: "Ada \(caller)")], mapper: MapUserMapper())
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await users.count() == 1)
            #expect(try await users.first()?.name.hasPrefix("Ada ") == true)
        },
    ]
}

/// Stores entities as they are.
struct Identity<Target: Entity>: PersistMapper {
    func entity(from source: Target) -> Target { source }
}
