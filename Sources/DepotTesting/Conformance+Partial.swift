import Depot
import Foundation
import Testing

/// A user whose API responses carry different subsets of fields: the entity of the partial-update
/// cases of ``StoreConformance``, patched directly and through ``TestUserPatchMapper``.
#if DEPOT_MACRO_FIXTURES
    @Entity("users")
#endif
public struct TestUser: Entity, Equatable {
    /// The primary key (column `id`).
    @PrimaryKey public var id: Int
    /// The display name: required, so a patch that creates a user must set it.
    public var name: String
    /// The email address; `nil` when unknown.
    public var email: String?
    /// Whether the user is online; `nil` when unknown (column `is_online`).
    @Column("is_online") public var isOnline: Bool?
    /// When the user was last seen; `nil` if never (column `last_seen`). ``TestUserDTO`` has no such
    /// field, so mapped patches keep it.
    @Column("last_seen") public var lastSeen: Date?

    /// Creates a user; the optional fields default to `nil`.
    public init(id: Int, name: String, email: String? = nil, isOnline: Bool? = nil, lastSeen: Date? = nil) {
        self.id = id
        self.name = name
        self.email = email
        self.isOnline = isOnline
        self.lastSeen = lastSeen
    }

    #if !DEPOT_MACRO_FIXTURES
        /// Table `users`, keyed by `id`; `isOnline` and `lastSeen` are stored as `is_online` and `last_seen`.
        public static let schema = Schema<TestUser>("users", primaryKey: \.id) {
            Column(\.id, "id")
            Column(\.name, "name")
            Column(\.email, "email")
            Column(\.isOnline, "is_online")
            Column(\.lastSeen, "last_seen")
        }
    #endif
}

/// A partial API response for ``TestUser``, decoded from JSON: each `Field` member is absent when
/// the JSON lacks it, `null` when the JSON says `null`, and a value otherwise.
public struct TestUserDTO: Codable, Sendable {
    /// The key of the user the response is about; always present.
    public var id: Int
    /// The name, if the response carries it; `$name` tells a missing member (`absent`) from `null`.
    @Field public var name: String?
    /// The email address, if the response carries it; `$email` tells a missing member from `null`.
    @Field public var email: String?
    /// Whether the user is online, if the response says; `$isOnline` tells a missing member from `null`.
    @Field public var isOnline: Bool?
}

/// Maps partial responses (``TestUserDTO``) to patches of ``TestUser``, for `persist(_:mapper:)`.
public struct TestUserPatchMapper: PatchMapper {
    /// Creates the mapper; it holds no state.
    public init() {}
    /// The patch one response makes: it assigns the name, email and online state the response carries,
    /// leaving the columns of missing members alone and clearing those it sends as `null`.
    ///
    /// - Parameter dto: A decoded response.
    /// - Returns: A patch of the ``TestUser`` row whose key is `dto.id`.
    public func patch(from dto: TestUserDTO) -> Patch<TestUser> {
        Patch(key: dto.id).set(\.name, dto.$name).set(\.email, dto.$email).set(\.isOnline, dto.$isOnline)
    }
}

private func decodeUsers(_ json: String) throws -> [TestUserDTO] {
    try JSONDecoder().decode([TestUserDTO].self, from: Data(json.utf8))
}

extension StoreConformance {
    static let partialCases: [ConformanceCase] = [
        ConformanceCase(
            "patches of 2,500 composite-key rows lacking a required column check their keys in chunks, and name a missing one"
        ) {
            (store: any Store) async throws in
            let samples = store.repository(Sample.self)
            try await samples.insert((0..<2_500).map { Sample(site: "s\($0 % 7)", number: $0, value: 0, unit: "m") })
            // `unit` is required and absent: each key must be stored (one OR of ANDs would pass
            // SQLite's expression depth limit of 1,000).
            let patches = (0..<2_500).map { Patch<Sample>(key: "s\($0 % 7)", $0).set(\.value, Double($0)) }
            try await samples.apply(patches)
            #expect(try await samples.count(where: \.value == 1_234) == 1)
            let unknown = patches.dropLast() + [Patch<Sample>(key: "nowhere", 9_999).set(\.value, 1)]
            let error = await #expect(throws: DepotError.self) { try await samples.apply(Array(unknown)) }
            #expect(error?.kind == .missingColumns)
            #expect(error?.message.contains("('nowhere', 9999) is not stored") == true, "\(error?.message ?? "")")
            #expect(try await samples.count() == 2_500)
        },
        ConformanceCase("a patch changes only the columns it assigns") { (store: any Store) async throws in
            let users = store.repository(TestUser.self)
            let seen = Date(timeIntervalSinceReferenceDate: 700_000_000.25)
            try await users.insert(
                TestUser(id: 1, name: "Ada", email: "ada@example.com", isOnline: true, lastSeen: seen))
            try await users.apply([Patch(key: 1).set(\.name, "Ada L.")])
            #expect(
                try await users.find(1)
                    == TestUser(id: 1, name: "Ada L.", email: "ada@example.com", isOnline: true, lastSeen: seen))
        },
        ConformanceCase("a stream of partial responses ends with the right stored row") {
            (store: any Store) async throws in
            let users = store.repository(TestUser.self)
            let mapper = TestUserPatchMapper()
            try await users.persist(
                decodeUsers(#"[{"id": 7, "name": "Grace", "email": "g@example.com", "isOnline": true}]"#),
                mapper: mapper)
            #expect(try await users.find(7)?.isOnline == true)
            try await users.persist(decodeUsers(#"[{"id": 7, "name": "Grace H."}]"#), mapper: mapper)
            #expect(
                try await users.find(7) == TestUser(id: 7, name: "Grace H.", email: "g@example.com", isOnline: true))
            try await users.persist(decodeUsers(#"[{"id": 7, "isOnline": null}]"#), mapper: mapper)
            #expect(try await users.find(7) == TestUser(id: 7, name: "Grace H.", email: "g@example.com", isOnline: nil))
            try await users.persist(decodeUsers(#"[{"id": 7, "isOnline": false, "email": null}]"#), mapper: mapper)
            #expect(try await users.find(7) == TestUser(id: 7, name: "Grace H.", email: nil, isOnline: false))
        },
        ConformanceCase("absent keeps, null clears and a value sets every optional attribute type") {
            (store: any Store) async throws in
            let all = store.repository(AllTypes.self)
            try await all.insert(AllTypes.extremes)
            let source = AllTypes.extremes[0]
            // Absent everywhere: nothing changes.
            try await all.apply([
                Patch<AllTypes>(key: 1).set(\.optionalInt, Field<Int>.absent).set(
                    \.optionalRunway, Field<Runway>.absent)
            ])
            #expect(try await all.find(1) == source)
            // Null everywhere: every optional column cleared, the rest kept.
            try await all.apply([
                Patch<AllTypes>(key: 1).set(\.optionalInt, Field<Int>.null).set(\.optionalString, Field<String>.null)
                    .set(\.optionalDate, Field<Date>.null).set(\.optionalDecimal, Field<Decimal>.null)
                    .set(\.optionalData, Field<Data>.null).set(\.optionalUUID, Field<UUID>.null)
                    .set(\.optionalSurface, Field<Surface>.null).set(\.optionalRunway, Field<Runway>.null)
            ])
            var cleared = source
            cleared.optionalInt = nil
            cleared.optionalString = nil
            cleared.optionalDate = nil
            cleared.optionalDecimal = nil
            cleared.optionalData = nil
            cleared.optionalUUID = nil
            cleared.optionalSurface = nil
            cleared.optionalRunway = nil
            #expect(try await all.find(1) == cleared)
            // Values everywhere: set back, and non-optional columns too.
            let other = AllTypes.extremes[1]
            try await all.apply([
                Patch<AllTypes>(key: 1).set(\.optionalInt, .value(source.optionalInt ?? 0))
                    .set(\.optionalString, .value(source.optionalString ?? "")).set(
                        \.optionalDate, .value(Date(timeIntervalSince1970: 3))
                    )
                    .set(\.optionalDecimal, .value(source.optionalDecimal ?? 0)).set(\.optionalData, .value(Data([1])))
                    .set(\.optionalUUID, .value(other.uuid)).set(\.optionalSurface, .value(Surface.gravel))
                    .set(\.optionalRunway, .value(source.runway)).set(\.decimal, other.decimal).set(
                        \.int64, other.int64
                    )
                    .set(\.string, Field<String>.value("ß")).set(\.bool, Field<Bool>.absent)
            ])
            var expected = source
            expected.optionalDate = Date(timeIntervalSince1970: 3)
            expected.optionalData = Data([1])
            expected.optionalUUID = other.uuid
            expected.optionalSurface = .gravel
            expected.optionalRunway = source.runway
            expected.decimal = other.decimal
            expected.int64 = other.int64
            expected.string = "ß"
            #expect(try await all.find(1) == expected)
        },
        ConformanceCase("a mixed batch creates complete new rows and patches existing ones") {
            (store: any Store) async throws in
            let users = store.repository(TestUser.self)
            try await users.insert(TestUser(id: 1, name: "One", email: "one@example.com"))
            try await users.apply([
                Patch(key: 1).set(\.isOnline, true), Patch(key: 2).set(\.name, "Two"),
                Patch(key: 3).set(\.name, "Three").set(\.email, "three@example.com"),
            ])
            #expect(
                try await users.fetchAll() == [
                    TestUser(id: 1, name: "One", email: "one@example.com", isOnline: true),
                    TestUser(id: 2, name: "Two"),
                    TestUser(id: 3, name: "Three", email: "three@example.com"),
                ])
        },
        ConformanceCase("a patch that would create a row without required columns fails and writes nothing") {
            (store: any Store) async throws in
            let users = store.repository(TestUser.self)
            try await users.insert(TestUser(id: 1, name: "One"))
            let error = await #expect(throws: DepotError.self) {
                try await users.apply([
                    Patch(key: 1).set(\.email, "changed@example.com"), Patch(key: 5).set(\.email, "five@example.com"),
                ])
            }
            #expect(error?.kind == .missingColumns)
            #expect(error?.message == "TestUser row 5 is not stored, and its patch lacks required column(s) name")
            #expect(try await users.fetchAll() == [TestUser(id: 1, name: "One")])
        },
        ConformanceCase("a patch assigning nothing is a no-op for a stored key and an error for a missing one") {
            (store: any Store) async throws in
            let users = store.repository(TestUser.self)
            try await users.insert(TestUser(id: 1, name: "One", email: "one@example.com"))
            try await users.apply([Patch(key: 1)])
            #expect(try await users.fetchAll() == [TestUser(id: 1, name: "One", email: "one@example.com")])
            let error = await #expect(throws: DepotError.self) {
                try await users.apply([Patch(key: 1).set(\.email, "new@example.com"), Patch(key: 2)])
            }
            #expect(error?.kind == .missingColumns)
            #expect(try await users.find(1)?.email == "one@example.com")
        },
        ConformanceCase("an update writes only stored keys and says how many it wrote") {
            (store: any Store) async throws in
            let users = store.repository(TestUser.self)
            try await users.insert([TestUser(id: 1, name: "One"), TestUser(id: 2, name: "Two")])
            let table = TestUser.schema.table
            let written = try await store.transaction { writer in
                try await writer.write(
                    RowBatch(
                        columns: ["id", "name"], values: [.integer(1), .text("Uno"), .integer(3), .text("Tres")]),
                    into: table, mode: .update)
            }
            #expect(written == 1)
            #expect(try await users.fetchAll().map(\.name) == ["Uno", "Two"])
            let upserted = try await store.transaction { writer in
                try await writer.write(
                    RowBatch(
                        columns: ["id", "name"], values: [.integer(2), .text("Dos"), .integer(3), .text("Tres")]),
                    into: table, mode: .upsert)
            }
            #expect(upserted == 2)
        },
        ConformanceCase("patches of one key in one batch merge in order, the later assignment winning") {
            (store: any Store) async throws in
            let users = store.repository(TestUser.self)
            try await users.apply([
                Patch(key: 9).set(\.name, "first").set(\.email, "a@example.com"),
                Patch(key: 9).set(\.name, "last"), Patch(key: 9).set(\.isOnline, false),
            ])
            #expect(try await users.find(9) == TestUser(id: 9, name: "last", email: "a@example.com", isOnline: false))
        },
        ConformanceCase("null for a non-optional column fails, naming the column") { (store: any Store) async throws in
            let users = store.repository(TestUser.self)
            try await users.insert(TestUser(id: 1, name: "One"))
            let dto = try decodeUsers(#"[{"id": 1, "name": null}]"#)
            let error = await #expect(throws: DepotError.self) {
                try await users.persist(dto, mapper: TestUserPatchMapper())
            }
            #expect(error?.message == "patch of TestUser row 1: null for non-optional column name")
            #expect(try await users.find(1)?.name == "One")
        },
    ]
}
