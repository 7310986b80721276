import Depot

/// An account with a schema that declares indexes: an index on `country`, a unique `email` and
/// a unique pair (`team`, `handle`). The schema-index cases of ``StoreConformance`` write it.
#if DEPOT_MACRO_FIXTURES
    @Entity("test_accounts")
#endif
public struct TestAccount: Entity, Equatable, Hashable {
    /// The primary key (column `id`).
    @PrimaryKey public var id: Int
    /// Unique when present (column `email`); rows without one never collide.
    @Unique public var email: String?
    /// Indexed (column `country`).
    @Indexed public var country: String
    /// The team; `(team, handle)` is unique (column `team`).
    @Unique("test_accounts_team_handle") public var team: String?
    /// Unique within a team (column `handle`).
    @Unique("test_accounts_team_handle") public var handle: String

    /// Creates an account.
    public init(id: Int, email: String?, country: String, handle: String, team: String? = nil) {
        self.id = id
        self.email = email
        self.country = country
        self.handle = handle
        self.team = team
    }

    #if !DEPOT_MACRO_FIXTURES
        /// Table `test_accounts`, keyed by `id`, with indexes `test_accounts_country_idx`,
        /// `test_accounts_email_key` (unique) and `test_accounts_team_handle` (unique).
        public static let schema = Schema<TestAccount>("test_accounts", primaryKey: \.id) {
            Column(\.id, "id")
            Column(\.email, "email")
            Column(\.country, "country")
            Column(\.team, "team")
            Column(\.handle, "handle")
        }
        .index(\.country)
        .unique(\.email)
        .unique(\.team, \.handle, name: "test_accounts_team_handle")
    #endif

    /// Three accounts that break none of the constraints (two without an email).
    public static let sample: [TestAccount] = [
        TestAccount(id: 1, email: "ada@example.com", country: "GB", handle: "ada", team: "core"),
        TestAccount(id: 2, email: nil, country: "NO", handle: "ola", team: "core"),
        TestAccount(id: 3, email: nil, country: "NO", handle: "ada", team: "apps"),
    ]
}
