import Depot
import Testing

extension StoreConformance {
    static let schemaIndexCases: [ConformanceCase] = [
        ConformanceCase("a unique column declared by the schema rejects a second row with its value, naming the index")
        {
            (store: any Store) async throws in
            let accounts = store.repository(TestAccount.self)
            try await accounts.insert(TestAccount.sample)
            let twin = TestAccount(id: 9, email: "ada@example.com", country: "SE", handle: "twin")
            let error = await #expect(throws: DepotError.self) {
                try await accounts.insert([
                    TestAccount(id: 8, email: "new@example.com", country: "SE", handle: "n"), twin,
                ])
            }
            #expect(error?.kind == .constraintViolation)
            #expect(error?.table == "test_accounts")
            #expect(
                error?.message.contains("test_accounts_email_key") == true || error?.message.contains("email") == true,
                "the message names the constraint or its column: \(error?.message ?? "")")
            #expect(try await accounts.count() == 3, "the failing batch wrote nothing")
            await #expect(throws: DepotError.self, "an update into a taken value fails too") {
                try await accounts.update(where: \.id == 3, set: \.email, to: "ada@example.com")
            }
            await #expect(throws: DepotError.self, "an upsert into a taken value fails too") {
                try await accounts.upsert(TestAccount(id: 2, email: "ada@example.com", country: "NO", handle: "ola"))
            }
            #expect(try await accounts.fetchAll() == TestAccount.sample, "nothing changed")
        },
        ConformanceCase("NULLs never collide in a unique constraint; a composite one collides only on all its columns")
        {
            (store: any Store) async throws in
            let accounts = store.repository(TestAccount.self)
            try await accounts.insert(TestAccount.sample)
            try await accounts.insert(TestAccount(id: 4, email: nil, country: "DK", handle: "ada", team: nil))
            try await accounts.insert(TestAccount(id: 5, email: nil, country: "DK", handle: "ada", team: nil))
            try await accounts.insert(TestAccount(id: 6, email: nil, country: "DK", handle: "ola", team: "apps"))
            let error = await #expect(throws: DepotError.self) {
                try await accounts.insert(TestAccount(id: 7, email: nil, country: "DK", handle: "ola", team: "core"))
            }
            #expect(error?.kind == .constraintViolation)
            #expect(try await accounts.count() == 6)
            // Freeing a value lets another row take it, in one transaction.
            try await store.write { tx in
                let accounts = tx.repository(TestAccount.self)
                try await accounts.update(where: \.id == 1, set: \.email, to: nil)
                try await accounts.update(where: \.id == 2, set: \.email, to: "ada@example.com")
            }
            #expect(try await accounts.find(2)?.email == "ada@example.com")
            #expect(try await accounts.fetch(where: \.country == "NO").map(\.id) == [2, 3], "indexed column answers")
        },
    ]
}
