// The README's seed sample, verbatim between the markers (ReadmeSampleTests checks it):
// the declarations a user, its API response and a partial update need, counted by
// SeedSampleTests (at most 20 lines of declarations).
import Depot
import Foundation

// readme:begin
@Entity("members")
struct Member: Equatable {
    @PrimaryKey var id: Int
    var name: String
    var kind: Kind
    var image: Image
    @Column("is_online") var isOnline: Bool?
}
enum Kind: String, StorableValue, Codable { case human, bot }
struct Image: StorableAsJSON, Equatable { var url: URL, width: Int, height: Int }

struct MemberResponse: Decodable, Sendable {
    let id: Int, name: String, kind: Kind, image: Image
    @Field var isOnline: Bool?  // absent, null or a value
}
struct MemberResponseMapper: PatchMapper {
    func patch(from r: MemberResponse) -> Patch<Member> {
        Patch(key: r.id).set(\.name, r.name).set(\.kind, r.kind).set(\.image, r.image).set(\.isOnline, r.$isOnline)
    }
}
// readme:end

func seedUseSite(store: some Store, json: Data) async throws -> (Member?, [Member]) {
    // readme:begin
    let members = store.repository(Member.self)
    let responses = try JSONDecoder().decode([MemberResponse].self, from: json)
    try await members.persist(responses, mapper: MemberResponseMapper())  // absent isOnline: kept
    let ada = try await members.find(1)
    let bots = try await members.fetch(where: \.kind == .bot && \.isOnline == true)
    // readme:end
    return (ada, bots)
}
