import Depot
import DepotPostgres
import DepotSQL
import DepotSQLite
import DepotTestSupport
import DepotTesting
import Testing

/// One migration list, two engines: the schemas they build compare equal once normalized.
@Suite(
    "Schema parity of SQLite and PostgreSQL",
    .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"), .timeLimit(.minutes(10)))
struct SchemaParityTests {
    @Test("the same migrations give the same tables, columns, types, keys and indexes, up and down")
    func sameSchema() async throws {
        let sqlite = try SQLiteStore.temporary()
        try await PostgresTestServer.withStore { postgres in
            let migrations = MigrationConformance.sample
            for target in [migrations.latestVersion, 2, migrations.latestVersion] {
                try await sqlite.migrate(migrations, to: target)
                try await postgres.migrate(migrations, to: target)
                let left = try await sqlite.introspect()
                let right = try await postgres.introspect()
                #expect(left == right, "at version \(target):\nSQLite:\n\(left)\nPostgreSQL:\n\(right)")
                #expect(left.tables.map(\.name).contains("depot_migrations"))
            }
            try await sqlite.repository(TestAccount.self).insert(TestAccount.sample)
            try await postgres.repository(TestAccount.self).insert(TestAccount.sample)
            let sqliteAccounts = try await sqlite.introspect().tables.first { $0.name == "test_accounts" }
            let postgresAccounts = try await postgres.introspect().tables.first { $0.name == "test_accounts" }
            #expect(sqliteAccounts == postgresAccounts, "tables created from a schema with indexes match")
            #expect(
                sqliteAccounts?.indexes.map(\.name) == [
                    "test_accounts_country_idx", "test_accounts_email_key", "test_accounts_team_handle",
                ])
            let latest = try await sqlite.introspect()
            #expect(latest.tables.contains { !$0.indexes.isEmpty }, "the list builds an index: \(latest)")
        }
    }
}
