import Depot
import DepotTestSupport
import Foundation
import PropertyBased
import Synchronization
import Testing

/// The stored entity the fuzzed DTOs patch.
private struct Member: Entity, Equatable {
    var id: Int
    var name: String
    var email: String?
    var isOnline: Bool?
    static let schema = Schema<Member>("members", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.name, "name")
        Column(\.email, "email")
        Column(\.isOnline, "is_online")
    }
}

/// A partial API response: absent, `null` and a value mean three different things.
private struct MemberDTO: Codable, Sendable {
    let id: Int
    @Field var name: String?
    @Field var isOnline: Bool?
}

private struct MemberDTOMapper: PatchMapper {
    func patch(from dto: MemberDTO) -> Patch<Member> {
        Patch(key: dto.id).set(\.name, dto.$name).set(\.isOnline, dto.$isOnline)
    }
}

/// A JSON value as a server might send it, right or wrong.
private enum Fragment: Sendable {
    case int(Int)
    case double(Double)
    case string(String)
    case bool(Bool)
    case null
    /// Text that is JSON but odd: huge numbers, `-0`, a lone surrogate escape, nesting.
    case raw(String)

    var json: String {
        switch self {
        case .int(let value): "\(value)"
        case .double(let value): "\(value)"
        case .string(let text):
            String(decoding: (try? JSONEncoder().encode(text)) ?? Data("\"\"".utf8), as: UTF8.self)
        case .bool(let value): "\(value)"
        case .null: "null"
        case .raw(let text): text
        }
    }

    static let text = Gen<String>.oneOf(
        Gen.element(of: ["", "Grace", "ß", "İı", "ﬁ", "Σσς", "e\u{301}", "👩‍🚀", "\u{0}", "\"", "\\", "a\nb"])
            .map { $0 ?? "" }.eraseToAnySequence(),
        Gen.unicodeScalar(in: "\u{20}"..."\u{D7FF}").map { Character($0) }.string(of: 0...6)
            .eraseToAnySequence()
    )

    static let generator = Gen<Fragment>.oneOf(
        Gen.int(in: -1...8).map { Fragment.int($0) }.eraseToAnySequence(),
        Gen.double(in: -1e9...1e9).map { Fragment.double($0) }.eraseToAnySequence(),
        text.map { Fragment.string($0) }.eraseToAnySequence(),
        Gen.bool.map { Fragment.bool($0) }.eraseToAnySequence(),
        Gen.always(Fragment.null).eraseToAnySequence(),
        Gen.element(of: [
            "1e400", "-0", "18446744073709551616", "9223372036854775807", "\"\\ud800\"", "[]", "{}",
            "[null]", "{\"id\": 1}", "1.0", "0x10",
        ]).map { Fragment.raw($0 ?? "0") }.eraseToAnySequence()
    )
}

/// One object of the response: each key absent or holding a fragment.
private struct FuzzObject: Sendable, CustomStringConvertible {
    var fields: [(key: String, value: Fragment?)]
    var json: String {
        "{" + fields.compactMap { field in field.value.map { "\"\(field.key)\": \($0.json)" } }.joined(separator: ", ")
            + "}"
    }
    var description: String { json }

    static let generator = Gen<FuzzObject>.oneOf(
        // Mostly well-formed: an id, and the fields the DTO knows.
        zip(Gen.int(in: 1...8), Fragment.generator.optional(), Fragment.generator.optional())
            .map { id, name, online in
                FuzzObject(fields: [("id", .int(id)), ("name", name), ("isOnline", online)])
            }.eraseToAnySequence(),
        zip(Gen.int(in: 1...8), Fragment.text.optional(), Gen.bool.optional(valueRate: 0.6))
            .map { id, name, online in
                FuzzObject(fields: [
                    ("id", .int(id)), ("name", name.map { .string($0) }),
                    ("isOnline", online.map { .bool($0) } ?? .null),
                ])
            }.eraseToAnySequence(),
        // Anything at all under any of the keys, an unknown key too.
        zip(Fragment.generator.optional(), Fragment.generator.optional(), Fragment.generator.optional())
            .map { id, name, extra in FuzzObject(fields: [("id", id), ("name", name), ("email", extra)]) }
            .eraseToAnySequence()
    )
}

@Suite("Fuzzed partial responses")
struct PatchFuzzTests {
    fileprivate static let stored = (1...5).map {
        Member(id: $0, name: "member \($0)", email: "m\($0)@example.com", isOnline: $0.isMultiple(of: 2))
    }

    @Test(
        "any JSON body decodes into Field DTOs or fails with a decoding error; the patches then write exactly the fields present, or nothing with a named error"
    )
    func fuzzedBodies() async throws {
        try await HeavyHarness.run {
            let counts = FuzzCounts()
            let cut = Gen.int(in: -40...300)  // where the body is cut or gets a stray character; < 0: intact
            await propertyCheck(
                count: 10_000, input: FuzzObject.generator.array(of: 0...4), cut, Gen.uint8(in: 32...126)
            ) {
                objects, position, stray in
                var body = Array(("[" + objects.map(\.json).joined(separator: ", ") + "]").utf8)
                if position >= 0 && position < body.count {
                    if stray.isMultiple(of: 2) {
                        body = Array(body.prefix(position))
                    } else {
                        body.insert(stray, at: position)
                    }
                }
                await Self.check(Data(body), counts: counts)
            }
            let (undecodable, written, refused) = counts.value.withLock { ($0.undecodable, $0.written, $0.refused) }
            print("fuzzed partial responses: \(undecodable) not decodable, \(written) written, \(refused) refused")
            #expect(undecodable + written + refused == 10_000)
            #expect(written > 0 && refused > 0 && undecodable > 0)
        }
    }

    /// Decodes `body`, persists it, and compares the store with what the documentation promises
    /// (absent: kept; null: cleared; a value: set; later patches of a key winning column by
    /// column; a new key created only when its patches name every required column; any null for
    /// a non-optional column failing the call).
    static func check(_ body: Data, counts: FuzzCounts) async {
        let dtos: [MemberDTO]
        do {
            dtos = try JSONDecoder().decode([MemberDTO].self, from: body)
        } catch is DecodingError {
            counts.value.withLock { $0.undecodable += 1 }
            return
        } catch {
            Issue.record("decoding \(String(decoding: body, as: UTF8.self)) threw \(error), not a DecodingError")
            return
        }
        let store = InMemoryStore()
        let members = store.repository(Member.self)
        do {
            try await members.insert(stored)
            let expected = model(dtos)
            do {
                try await members.persist(dtos, mapper: MemberDTOMapper())
                counts.value.withLock { $0.written += 1 }
                #expect(expected != nil, "\(String(decoding: body, as: UTF8.self)) was written; it should fail")
                if let expected { #expect(try await members.fetchAll() == expected) }
            } catch let error as DepotError {
                counts.value.withLock { $0.refused += 1 }
                #expect(expected == nil, "\(String(decoding: body, as: UTF8.self)) failed: \(error.message)")
                #expect([.invalidQuery, .missingColumns].contains(error.kind), "\(error.kind): \(error.message)")
                #expect(try await members.fetchAll() == stored, "a failed write changes nothing")
            }
        } catch {
            Issue.record("\(String(decoding: body, as: UTF8.self)): \(error)")
        }
    }

    /// What the store holds after `dtos`, or `nil` when the call must fail.
    fileprivate static func model(_ dtos: [MemberDTO]) -> [Member]? {
        // Any patch setting null for a non-optional column fails the call, even if a later one
        // for the key sets a value.
        if dtos.contains(where: { if case .null = $0.$name { true } else { false } }) { return nil }
        var merged: [Int: (name: Field<String>, isOnline: Field<Bool>)] = [:]
        var order: [Int] = []
        for dto in dtos {
            if merged[dto.id] == nil { order.append(dto.id) }
            var entry = merged[dto.id] ?? (.absent, .absent)
            if case .absent = dto.$name {} else { entry.name = dto.$name }
            if case .absent = dto.$isOnline {} else { entry.isOnline = dto.$isOnline }
            merged[dto.id] = entry
        }
        var rows = Dictionary(uniqueKeysWithValues: stored.map { ($0.id, $0) })
        for id in order {
            guard let entry = merged[id] else { continue }
            var row: Member
            if let existing = rows[id] {
                row = existing
            } else {
                guard case .value(let name) = entry.name else { return nil }  // a new row needs its name
                row = Member(id: id, name: name, email: nil, isOnline: nil)
            }
            if case .value(let name) = entry.name { row.name = name }
            switch entry.isOnline {
            case .absent: break
            case .null: row.isOnline = nil
            case .value(let value): row.isOnline = value
            }
            rows[id] = row
        }
        return rows.values.sorted { $0.id < $1.id }
    }
}

/// What the fuzzed bodies came to.
final class FuzzCounts: Sendable {
    let value = Mutex((undecodable: 0, written: 0, refused: 0))
}
