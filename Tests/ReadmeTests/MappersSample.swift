// The README's "Repositories with mappers" walk, verbatim between the markers
// (ReadmeSampleTests checks it); MappersSampleTests runs it on the three stores and counts its
// declarations.
import Depot
import Foundation

// readme:begin
struct UserResponse: Decodable, Sendable {  // what the API sends; isOnline is absent when unknown
    let identifier: String, name: String, kind: String, isOnline: Bool?, image: ImageResponse?
}
struct ImageResponse: Decodable, Sendable { let url: URL, width: Int, height: Int }

@Entity("users")
struct UserEntity {  // what is stored: two tables
    @PrimaryKey var id: UUID
    @Unique @Column("remote_id") var remoteID: String
    var name: String, kind: String, isOnline: Bool?, imageURL: URL?
    static let image = ToOne<UserEntity, ImageEntity>(\.imageURL, onDelete: .nullify)
    static var relations: [any Relation<UserEntity>] { [image] }
}
@Entity("images")
struct ImageEntity {
    @PrimaryKey var url: URL
    var width: Int, height: Int
    static var relations: [any Relation<ImageEntity>] { [ToMany(UserEntity.image)] }
}

struct User: Sendable, Equatable {  // what the app uses
    enum Kind: String { case human, bot }
    var id: String, name: String, kind: Kind, isOnline: Bool?, avatar: URL?
}
// readme:end

// readme:begin
struct UserResponseMapper: UpdateMapper {
    var match: Match<UserResponse, UserEntity> { Match(\.identifier, \.remoteID) }
    var nested: [Nested<UserResponse, UserEntity>] { [.toOne(\.image, in: UserEntity.image, mapper: ImageMapper())] }
    func makeEntity(from r: UserResponse) -> UserEntity {
        UserEntity(id: UUID(), remoteID: r.identifier, name: r.name, kind: r.kind, isOnline: r.isOnline, imageURL: nil)
    }
    func update(_ user: inout UserEntity, from r: UserResponse) {
        (user.name, user.kind, user.isOnline) = (r.name, r.kind, r.isOnline ?? user.isOnline)
    }
}
struct ImageMapper: PersistMapper {
    func entity(from r: ImageResponse) -> ImageEntity { ImageEntity(url: r.url, width: r.width, height: r.height) }
}
struct UserMapper: DomainMapper {
    var includes: [any IncludeSpec<UserEntity>] { [UserEntity.image] }
    func model(from u: Loaded<UserEntity>) throws -> User {
        let (kind, avatar) = (User.Kind(rawValue: u.kind) ?? .human, try u[UserEntity.image]?.url)
        return User(id: u.remoteID, name: u.name, kind: kind, isOnline: u.isOnline, avatar: avatar)
    }
}
// readme:end

/// What the README's use site saw, for MappersSampleTests.
struct MappersSampleRun {
    var stored: [User]
    var bots: [User]
    var firstList: [User]
    var secondList: [User]
}

func mappersUseSite(store: some Store, json: Data, again: Data) async throws -> MappersSampleRun {
    // readme:begin
    let users = store.repository(UserEntity.self).mapped(by: UserMapper())
    let responses = try JSONDecoder().decode([UserResponse].self, from: json)
    let stored: [User] = try await users.persist(responses, mapper: UserResponseMapper())

    let onlineBots = Query<UserEntity>(where: \.kind == "bot" && \.isOnline == true).sorted(by: .ascending(\.name))
    let bots = try await users.fetch(onlineBots)  // [User], each with its avatar
    // readme:end
    var lists = users.observe(onlineBots).makeAsyncIterator()
    let firstList = try await lists.next() ?? []
    try await users.persist(try JSONDecoder().decode([UserResponse].self, from: again), mapper: UserResponseMapper())
    let secondList = try await lists.next() ?? []
    return MappersSampleRun(stored: stored, bots: bots, firstList: firstList, secondList: secondList)
}

/// The README's loop over the use site's observation (run by ObservationLoopSampleTests in a
/// process of its own: it ends only when cancelled).
func printOnlineBots(_ users: MappedRepository<UserMapper>, _ onlineBots: Query<UserEntity>) async throws {
    // readme:begin
    for try await list in users.observe(onlineBots) { print(list.map(\.name)) }  // again after each change
    // readme:end
}
