import Depot
import Foundation

// A user with an image (to-one, its own table) and posts (ordered to-many), stored from API-like
// responses through update mappers that match by a unique column, not the key.

/// A stored user: a local UUID key, the API's identifier in a unique `remote_id` column.
struct MapUser: Entity, Equatable {
    var id: UUID
    var remoteID: String
    var name: String
    var kind: String
    var isOnline: Bool?
    var imageURL: String?

    static let schema = Schema<MapUser>("map_users", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.remoteID, "remote_id")
        Column(\.name, "name")
        Column(\.kind, "kind")
        Column(\.isOnline, "is_online")
        Column(\.imageURL, "image_url")
    }.unique(\.remoteID)
    static let image = ToOne<MapUser, MapImage>(\.imageURL, onDelete: .nullify)
    static let posts = ToMany(MapPost.author, orderedBy: \.position)
    static var relations: [any Relation<MapUser>] { [image, posts] }
}

/// A stored image, keyed by its URL.
struct MapImage: Entity, Equatable {
    var url: String
    var width: Int
    var height: Int

    static let schema = Schema<MapImage>("map_images", primaryKey: \.url) {
        Column(\.url, "url")
        Column(\.width, "width")
        Column(\.height, "height")
    }
    static let users = ToMany(MapUser.image)
    static var relations: [any Relation<MapImage>] { [users] }
}

/// A stored post of a user, in the user's order.
struct MapPost: Entity, Equatable {
    var id: String
    var authorID: UUID
    var title: String
    var position: Double

    static let schema = Schema<MapPost>("map_posts", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.authorID, "author_id")
        Column(\.title, "title")
        Column(\.position, "position")
    }
    static let author = ToOne<MapPost, MapUser>(\.authorID, onDelete: .cascade)
    static let comments = ToMany(MapComment.post)
    static var relations: [any Relation<MapPost>] { [author, comments] }
}

/// A comment on a post: the third level of a nested persist.
struct MapComment: Entity, Equatable {
    var id: String
    var postID: String
    var text: String

    static let schema = Schema<MapComment>("map_comments", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.postID, "post_id")
        Column(\.text, "text")
    }
    static let post = ToOne<MapComment, MapPost>(\.postID, onDelete: .cascade)
    static var relations: [any Relation<MapComment>] { [post] }
}

struct MapCommentResponse: Sendable {
    var id: String
    var text: String
}

struct MapCommentMapper: UpdateMapper {
    var match: Match<MapCommentResponse, MapComment> { Match(\.id, \.id) }
    func makeEntity(from source: MapCommentResponse) -> MapComment {
        MapComment(id: source.id, postID: "", text: source.text)
    }
    func update(_ comment: inout MapComment, from source: MapCommentResponse) { comment.text = source.text }
}

/// A tag, unique by scope and name together (a composite match), under a local key.
struct MapTag: Entity, Equatable {
    var id: UUID
    var scope: String
    var name: String
    var uses: Int

    static let schema = Schema<MapTag>("map_tags", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.scope, "scope")
        Column(\.name, "name")
        Column(\.uses, "uses")
    }.unique(\.scope, \.name)
}

struct MapImageResponse: Sendable {
    var url: String
    var width: Int
    var height: Int
}

struct MapPostResponse: Sendable {
    var id: String
    var title: String
    var comments: [MapCommentResponse] = []
}

struct MapUserResponse: Sendable {
    var identifier: String
    var name: String
    var kind: String = "human"
    var isOnline: Bool?
    var image: MapImageResponse?
    var posts: [MapPostResponse] = []
}

struct MapImageMapper: UpdateMapper {
    var match: Match<MapImageResponse, MapImage> { Match(\.url, \.url) }
    func makeEntity(from source: MapImageResponse) -> MapImage {
        MapImage(url: source.url, width: source.width, height: source.height)
    }
    func update(_ image: inout MapImage, from source: MapImageResponse) {
        image = makeEntity(from: source)
    }
}

/// Fails on a post titled "boom", to check that a nested mapper's error writes nothing.
struct MapPostMapper: UpdateMapper {
    struct Boom: Error {}
    var match: Match<MapPostResponse, MapPost> { Match(\.id, \.id) }
    var nested: [Nested<MapPostResponse, MapPost>] {
        [.toMany(\.comments, in: MapPost.comments, mapper: MapCommentMapper())]
    }
    func makeEntity(from source: MapPostResponse) throws -> MapPost {
        // The author and the position are set by the parent's nesting.
        var post = MapPost(id: source.id, authorID: UUID(), title: "", position: 0)
        try update(&post, from: source)
        return post
    }
    func update(_ post: inout MapPost, from source: MapPostResponse) throws {
        if source.title == "boom" { throw Boom() }
        post.title = source.title
    }
}

struct MapUserMapper: UpdateMapper {
    var match: Match<MapUserResponse, MapUser> { Match(\.identifier, \.remoteID) }
    var nested: [Nested<MapUserResponse, MapUser>] {
        [
            .toOne(\.image, in: MapUser.image, mapper: MapImageMapper()),
            .toMany(\.posts, in: MapUser.posts, mapper: MapPostMapper()),
        ]
    }
    func makeEntity(from source: MapUserResponse) -> MapUser {
        var user = MapUser(id: UUID(), remoteID: source.identifier, name: "", kind: "", isOnline: nil, imageURL: nil)
        update(&user, from: source)
        return user
    }
    func update(_ user: inout MapUser, from source: MapUserResponse) {
        user.name = source.name
        user.kind = source.kind
        if let isOnline = source.isOnline { user.isOnline = isOnline }
    }
}

/// Counts uses of a tag, matched by scope and name.
struct MapTagMapper: UpdateMapper {
    var match: Match<MapTag, MapTag> { Match(\.scope, \.scope, \.name, \.name) }
    func makeEntity(from source: MapTag) -> MapTag {
        MapTag(id: UUID(), scope: source.scope, name: source.name, uses: 1)
    }
    func update(_ tag: inout MapTag, from source: MapTag) { tag.uses += 1 }
}

/// Matches users by name, which is not unique: refused.
struct MapUserByNameMapper: UpdateMapper {
    var match: Match<MapUserResponse, MapUser> { Match(\.name, \.name) }
    func makeEntity(from source: MapUserResponse) -> MapUser { MapUserMapper().makeEntity(from: source) }
    func update(_ user: inout MapUser, from source: MapUserResponse) {}
}

/// Forgets to store the identifier it matches by: refused, or the next persist would not find the row.
struct MapForgetfulMapper: UpdateMapper {
    var match: Match<MapUserResponse, MapUser> { Match(\.identifier, \.remoteID) }
    func makeEntity(from source: MapUserResponse) -> MapUser {
        MapUser(id: UUID(), remoteID: "", name: source.name, kind: source.kind, isOnline: nil, imageURL: nil)
    }
    func update(_ user: inout MapUser, from source: MapUserResponse) {}
}

/// A user as a screen shows it: built from two tables.
struct MapUserModel: Sendable, Equatable {
    var identifier: String
    var name: String
    var posts: [String]
}

/// Reads users with their posts, in the posts' order.
struct MapUserModelMapper: DomainMapper {
    var includes: [any IncludeSpec<MapUser>] { [MapUser.posts] }
    func model(from user: Loaded<MapUser>) throws -> MapUserModel {
        MapUserModel(identifier: user.remoteID, name: user.name, posts: try user[MapUser.posts].map(\.title))
    }
}
