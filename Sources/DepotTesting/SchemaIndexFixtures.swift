import Depot

/// An account with a schema that declares indexes: an index on `country`, a unique `email` and
/// a unique pair (`team`, `handle`). The schema-index cases of ``StoreConformance`` write it.
public struct TestAccount: Entity, Equatable, Hashable {
    /// The primary key (column `id`).
    public var id: Int
    /// Unique when present (column `email`); rows without one never collide.
    public var email: String?
    /// Indexed (column `country`).
    public var country: String
    /// Unique within a team (column `handle`).
    public var handle: String
    /// The team; `(team, handle)` is unique (column `team`).
    public var team: String?

    /// Creates an account.
    public init(id: Int, email: String?, country: String, handle: String, team: String? = nil) {
        self.id = id
        self.email = email
        self.country = country
        self.handle = handle
        self.team = team
    }

    /// Table `test_accounts`, keyed by `id`, with indexes `test_accounts_country_idx`,
    /// `test_accounts_email_key` (unique) and `test_accounts_team_handle` (unique).
    public static let schema = Schema<TestAccount>("test_accounts", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.email, "email")
        Column(\.country, "country")
        Column(\.handle, "handle")
        Column(\.team, "team")
    }
    .index(\.country)
    .unique(\.email)
    .unique(\.team, \.handle, name: "test_accounts_team_handle")

    /// Three accounts that break none of the constraints (two without an email).
    public static let sample: [TestAccount] = [
        TestAccount(id: 1, email: "ada@example.com", country: "GB", handle: "ada", team: "core"),
        TestAccount(id: 2, email: nil, country: "NO", handle: "ola", team: "core"),
        TestAccount(id: 3, email: nil, country: "NO", handle: "ada", team: "apps"),
    ]
}
