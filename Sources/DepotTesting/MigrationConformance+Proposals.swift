import Depot
import Foundation
import Testing

// Version 1 of a table, created by a listed step; later versions differ from it in every way a
// proposal knows.

struct ProposalUserV1: Entity, Equatable {
    var id: String
    var name: String
    var mail: String?
    var age: Int
    var legacy: Int?

    static let schema = Schema<ProposalUserV1>("proposal_users", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.name, "name")
        Column(\.mail, "mail")
        Column(\.age, "age")
        Column(\.legacy, "legacy")
    }
}

/// `mail` renamed `email` (unique), `age` a Double, `legacy` gone, two new columns, an index.
@Entity("proposal_users")
struct ProposalUserV2: Equatable {
    @PrimaryKey var id: String
    var name: String
    @Unique var email: String?
    var age: Double
    @Column("is_online") var isOnline: Bool?
    @Indexed var country: String
}

/// Only additions to version 1: an optional column and an index.
@Entity("proposal_users")
struct ProposalUserV3: Equatable {
    @PrimaryKey var id: String
    @Indexed var name: String
    var mail: String?
    var age: Int
    var legacy: Int?
    var nickname: String?
}

/// A table version 1 lacks.
@Entity("proposal_teams")
struct ProposalTeam: Equatable {
    @PrimaryKey var code: String
    @Unique var title: String
}

extension MigrationConformance {
    static let proposalV1 = Migrations([Migration("1 users", [.createTable(ProposalUserV1.self)])])

    static let proposalCases: [MigrationCase] = [
        MigrationCase("a proposal lists every difference as a step; applying it leaves no drift and nothing to propose")
        { open in
            let store = try await open()
            try await store.migrate(proposalV1)
            try await store.repository(ProposalUserV1.self).insert([
                ProposalUserV1(id: "a", name: "Ada", mail: "ada@example.com", age: 36, legacy: 1),
                ProposalUserV1(id: "b", name: "Bo", mail: nil, age: 7, legacy: nil),
            ])
            let entities: [any Entity.Type] = [ProposalUserV2.self, ProposalTeam.self]
            let proposal = try await store.proposeMigration(for: entities)
            let source = proposal.swiftSource(name: "2 users and teams")
            for line in [
                #"Migration("2 users and teams", ["#,
                #"    .renameColumn("mail", to: "email", in: "proposal_users"),"#,
                #"    .addColumn("is_online", .bool, nullable: true, to: "proposal_users"),"#,
                #"    .addColumn("country", .text, to: "proposal_users", default: .text("")),"#,
                #"    .dropColumn("legacy", from: "proposal_users"),"#,
                #"    .alterColumn("age", to: .double, nullable: false, in: "proposal_users"),"#,
                #"    .createIndex("proposal_users_email_key", on: "proposal_users", columns: ["email"], unique: true),"#,
                #"    .createIndex("proposal_users_country_idx", on: "proposal_users", columns: ["country"]),"#,
                #"    .createTable(ProposalTeam.self),"#,
            ] {
                #expect(source.contains(line + "\n"), "missing \(line) in:\n\(source)")
            }
            #expect(source.contains("// confirm: 'mail' disappeared and 'email' (text) appeared"), "\(source)")
            #expect(!proposal.isAdditive && proposal.isComplete)
            await #expect(throws: DepotError.self, "the entities do not fit before") {
                try await store.checkSchema(of: entities)
            }

            try await store.migrate(Migrations(proposalV1.steps + [proposal.migration(named: "2 users and teams")]))
            try await store.checkSchema(of: entities)
            #expect(try await store.proposeMigration(for: entities).isEmpty, "nothing left to propose")
            let users = try await store.repository(ProposalUserV2.self).fetchAll()
            #expect(
                users == [
                    ProposalUserV2(id: "a", name: "Ada", email: "ada@example.com", age: 36, isOnline: nil, country: ""),
                    ProposalUserV2(id: "b", name: "Bo", email: nil, age: 7, isOnline: nil, country: ""),
                ], "renamed values kept, types converted, new columns defaulted")
        },
        MigrationCase("a database that matches its entities gets an empty proposal") { open in
            let store = try await open()
            try await store.migrate(proposalV1)
            let proposal = try await store.proposeMigration(for: [ProposalUserV1.self])
            #expect(proposal.isEmpty)
            #expect(proposal.swiftSource(name: "2 x") == "// The database matches the entities: nothing to migrate.")
        },
        MigrationCase(
            "applyAdditiveChanges adds tables, optional columns and indexes itself, recorded; opens again as is"
        ) { open in
            let store = try await open()
            try await store.migrate(proposalV1)
            try await store.repository(ProposalUserV1.self).insert(ProposalUserV1(id: "a", name: "Ada", age: 3))
            let entities: [any Entity.Type] = [ProposalUserV3.self, ProposalTeam.self]
            let outcome = try await store.open(proposalV1, entities: entities, onSchemaChange: .applyAdditiveChanges)
            #expect(outcome.steps.count == 1)
            #expect(
                outcome.steps.first
                    == "auto: add proposal_users.nickname, index proposal_users_name_idx, create proposal_teams")
            let ledger = try await store.appliedMigrations()
            #expect(ledger.map(\.version) == [1, 2])
            #expect(ledger.last?.name.hasPrefix(Migration.automaticPrefix) == true)
            #expect(try await store.repository(ProposalUserV3.self).find("a")?.nickname == nil)
            try await store.repository(ProposalTeam.self).insert(ProposalTeam(code: "t", title: "T"))

            let again = try await open()
            let second = try await again.open(proposalV1, entities: entities, onSchemaChange: .applyAdditiveChanges)
            #expect(second.steps.isEmpty, "nothing more to apply")
            #expect(try await again.appliedMigrations().count == 2)
            // Without the policy the database opens too: the automatic row trails the listed ones.
            try await again.open(proposalV1, entities: entities)

            // A listed step added later takes the automatic row's place; the changes stay.
            let grown = Migrations(
                proposalV1.steps + [
                    Migration("2 teams note", [.addColumn("note", .text, nullable: true, to: "proposal_teams")])
                ])
            let third = try await again.open(grown, entities: entities, onSchemaChange: .applyAdditiveChanges)
            #expect(third.steps == ["2 teams note"])
            #expect(try await again.appliedMigrations().map(\.name) == ["1 users", "2 teams note"])
            try await again.checkSchema(of: entities)
        },
        MigrationCase("stores opening one database with applyAdditiveChanges at once all start, the change made once") {
            open in
            let entities: [any Entity.Type] = [ProposalUserV3.self, ProposalTeam.self]
            for round in 0..<6 {
                let first = try await open()
                try await first.eraseDatabase()
                try await first.migrate(proposalV1)
                let stores = [first] + (try await [open(), open()])
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for store in stores {
                        group.addTask {
                            try await store.open(proposalV1, entities: entities, onSchemaChange: .applyAdditiveChanges)
                        }
                    }
                    try await group.waitForAll()
                }
                for store in stores { try await store.checkSchema(of: entities) }
                let ledger = try await first.appliedMigrations()
                #expect(ledger.count == 2, "round \(round): one automatic step, recorded once: \(ledger.map(\.name))")
            }
        },
        MigrationCase("applyAdditiveChanges refuses a change that is not additive, with the proposed steps as Swift") {
            open in
            let store = try await open()
            try await store.migrate(proposalV1)
            let error = await #expect(throws: DepotError.self) {
                try await store.open(proposalV1, entities: [ProposalUserV2.self], onSchemaChange: .applyAdditiveChanges)
            }
            #expect(error?.kind == .schemaMismatch)
            let message = error?.message ?? ""
            #expect(message.contains(#".renameColumn("mail", to: "email", in: "proposal_users")"#), "\(message)")
            #expect(message.contains(#"Migration("2 …", ["#), "\(message)")
            #expect(try await store.appliedMigrations().count == 1, "nothing was applied")
            #expect(try await store.proposeMigration(for: [ProposalUserV1.self]).isEmpty, "the table is unchanged")
        },
    ]
}
