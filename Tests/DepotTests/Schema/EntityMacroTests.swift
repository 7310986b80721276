import Depot
import Foundation
import Testing

/// The target spelling, compiled and stored.
@Entity("macro_users")
struct MacroUser: Equatable {
    @PrimaryKey var id: String
    var name: String
    @Column("is_online") var isOnline: Bool?
    @Indexed var country: String
    @Unique var email: String?
    @Transient var cachedAvatar: Data? = nil
    var kind: Kind = .person
    var joined: Date?

    var displayName: String { name.uppercased() }
    static let guest = "guest"

    enum Kind: String, StorableValue, Sendable { case person, robot }
}

/// A composite key and a composite unique constraint.
@Entity("macro_runways")
struct MacroRunway: Equatable {
    @PrimaryKey var airport: String
    @PrimaryKey var designator: String
    @Unique("macro_runways_surface_length") var surface: String
    @Unique("macro_runways_surface_length") var length: Int
    var lit = false
    var heading, width: Double
}

@Suite("@Entity")
struct EntityMacroTests {
    @Test("the macro's schema names each stored property's column, keys and indexes")
    func schemaFromProperties() {
        let table = MacroUser.schema.table
        #expect(MacroUser.schema.validationError == nil)
        #expect(table.name == "macro_users")
        #expect(table.columns.map(\.name) == ["id", "name", "is_online", "country", "email", "kind", "joined"])
        #expect(table.columns.map(\.isNullable) == [false, false, true, false, true, false, true])
        #expect(table.primaryKey == ["id"])
        #expect(
            table.indexes == [
                IndexDescription(name: "macro_users_country_idx", table: "macro_users", columns: ["country"]),
                IndexDescription(
                    name: "macro_users_email_key", table: "macro_users", columns: ["email"], isUnique: true),
            ])
        #expect(MacroRunway.schema.table.primaryKey == ["airport", "designator"])
        #expect(
            MacroRunway.schema.table.indexes == [
                IndexDescription(
                    name: "macro_runways_surface_length", table: "macro_runways", columns: ["surface", "length"],
                    isUnique: true)
            ])
        #expect(
            MacroRunway.schema.table.columns.map(\.name) == [
                "airport", "designator", "surface", "length", "lit", "heading", "width",
            ])
    }

    @Test("rows written and read through the generated codec come back equal; transient properties get their default")
    func roundTrip() async throws {
        let users = InMemoryStore().repository(MacroUser.self)
        var ada = MacroUser(
            id: "u1", name: "Ada", isOnline: nil, country: "GB", email: "ada@example.com", kind: .robot,
            joined: Date(timeIntervalSince1970: 1_700_000_000))
        ada.cachedAvatar = Data([1, 2, 3])
        try await users.insert(ada)
        let stored = try await users.find("u1")
        var expected = ada
        expected.cachedAvatar = nil
        #expect(stored == expected)
        #expect(try await users.fetch(where: \.kind == .robot).map(\.id) == ["u1"])
        #expect(MacroUser.schema.values(of: ada).count == 7)
        #expect(try MacroUser.schema.decode(MacroUser.schema.values(of: ada)) == expected)
    }

    @Test("a value that does not fit its property fails as decodingFailed naming the column and key")
    func decodingFailure() throws {
        var values = MacroUser.schema.values(
            of: MacroUser(id: "u2", name: "B", isOnline: true, country: "NO", email: nil))
        values[5] = .text("alien")
        #expect {
            try MacroUser.schema.decode(values)
        } throws: { error in
            let error = error as? DepotError
            return error?.kind == .decodingFailed && error?.column == "kind" && error?.message.contains("'u2'") == true
        }
    }
}
