import Depot
import DepotTesting
import Foundation
import Testing

struct Profile: Codable, Equatable, Sendable {
    var city: String
    @Field var bio: String?
}

struct Account: Codable, Sendable {
    var id: Int
    @Field var name: String?
    @Field var age: Int?
    @Field var profile: Profile?
    @Field var tags: [String]?
    var history: [Profile]
}

@Suite("Field: absent, null or value")
struct FieldTests {
    func decode(_ json: String) throws -> Account {
        try JSONDecoder().decode(Account.self, from: Data(json.utf8))
    }

    @Test("a missing key decodes as absent, null as null, a value as a value")
    func threeStates() throws {
        let account = try decode(#"{"id": 1, "name": null, "age": 42, "history": []}"#)
        #expect(account.$name == .null)
        #expect(account.$age == .value(42))
        #expect(account.$profile == .absent)
        #expect(account.$tags == .absent)
        #expect(account.name == nil)
        #expect(account.age == 42)
        #expect(!account.$profile.isPresent)
        #expect(account.$name.isPresent)
    }

    @Test("fields keep their states at any nesting depth, in objects and arrays")
    func nested() throws {
        let account = try decode(
            #"{"id": 1, "profile": {"city": "Oslo", "bio": null}, "tags": ["a"], "history": [{"city": "Bergen"}, {"city": "Å", "bio": "hi"}]}"#
        )
        #expect(account.profile?.city == "Oslo")
        #expect(account.profile?.$bio == .null)
        #expect(account.tags == ["a"])
        #expect(account.history.map(\.$bio) == [.absent, .value("hi")])
    }

    @Test("a value of the wrong type is a DecodingError naming the coding path")
    func wrongType() throws {
        do {
            _ = try decode(#"{"id": 1, "profile": {"city": "Oslo", "bio": 5}, "history": []}"#)
            Issue.record("decoding should fail")
        } catch let DecodingError.typeMismatch(type, context) {
            #expect("\(type)".contains("String"))
            #expect(context.codingPath.map(\.stringValue) == ["profile", "bio"])
        }
    }

    @Test("a required member that is missing is still an error")
    func requiredMissing() {
        #expect(throws: DecodingError.self) { try decode(#"{"name": "x", "history": []}"#) }
    }

    @Test("encoding leaves absent members out and writes null and values")
    func encoding() throws {
        var account = try decode(#"{"id": 3, "age": null, "history": []}"#)
        account.name = "Ada"
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(account), as: UTF8.self)
        #expect(json == #"{"age":null,"history":[],"id":3,"name":"Ada"}"#)
    }

    @Test("a patch whose key has the wrong number of values is an error naming the entity")
    func patchKeyArity() async throws {
        let readings = InMemoryStore().repository(Reading.self)
        let error = await #expect(throws: DepotError.self) {
            try await readings.apply([Patch<Reading>(key: "station-only").set(\.value, 1.5)])
        }
        #expect(error?.kind == .invalidQuery)
        #expect(error?.message == "a patch of Reading has a key of 1 value(s); the primary key has 2 column(s)")
        #expect(try await readings.count() == 0)
    }

    @Test("a patch assigns values and fields; absent assigns nothing")
    func patchAssignments() {
        let patch = Patch<Cached>(key: 1).set(\.title, Field<String>.absent)
        #expect(patch.isEmpty)
        let titled = Patch<Cached>(key: 1).set(\.title, "x")
        #expect(titled.assignedColumns == ["title"])
    }
}
