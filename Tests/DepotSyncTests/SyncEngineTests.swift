import AirportsExample
import Depot
import DepotHTTP
import DepotSQLite
import DepotSync
import Foundation
import Synchronization
import Testing

@Suite("SyncEngine against the airports API", .timeLimit(.minutes(10)))
struct SyncEngineTests {
    @Test("a first sync copies every airport page by page; the next brings only what changed")
    func copyThenChanges() async throws {
        try await withSyncServer { server, serverStore in
            let clock = TestClock()
            let replica = try Replica(server: server, clock: clock, pageSize: 40)
            let first = try await replica.engine.sync()
            let count = try await serverStore.repository(Airport.self).count()
            #expect(first.pulledRows == count)
            #expect(try await replica.all() == serverAirports(serverStore))
            #expect(try await replica.engine.pendingChanges().isEmpty)

            // A change made on the server by another client arrives in one request.
            _ = try await RawPush.patch(server, "ENGM", #"{"name": "Gardermoen"}"#)
            let next = try await replica.engine.sync()
            #expect(next.requests == 1)
            #expect(next.pulledRows == 1)
            #expect(try await replica.store.repository(Airport.self).find("ENGM")?.name == "Gardermoen")
            #expect(try await replica.all() == serverAirports(serverStore))
        }
    }

    @Test("an edit through the ordinary repository is stored at once, waits in the outbox, and is pushed once")
    func offlineEditIsPushed() async throws {
        try await withSyncServer { server, serverStore in
            let clock = TestClock()
            let replica = try Replica(server: server, clock: clock)
            try await replica.engine.sync()
            let updated = try await replica.airports.update(
                where: \.icao == "ENGM", set: [.set(\.name, to: "Oslo Gardermoen"), .set(\.iata, to: nil)])
            #expect(updated == 1)
            #expect(try await replica.store.repository(Airport.self).find("ENGM")?.name == "Oslo Gardermoen")
            let pending = try await replica.engine.pendingChanges()
            #expect(pending.count == 1)
            #expect(pending.first?.changes == ["name": .text("Oslo Gardermoen"), "iata": .null])
            #expect(try await replica.engine.pendingKeys(Airport.self, as: String.self) == ["ENGM"])
            #expect(try await serverStore.repository(Airport.self).find("ENGM")?.name != "Oslo Gardermoen")

            let report = try await replica.engine.sync()
            #expect(report.pushed == 1)
            #expect(try await replica.engine.pendingChanges().isEmpty)
            let onServer = try await serverStore.repository(Airport.self).find("ENGM")
            #expect(onServer?.name == "Oslo Gardermoen")
            #expect(onServer?.iata == nil)
            #expect(onServer?.city == "Oslo")
            #expect(try await replica.all() == serverAirports(serverStore))
        }
    }

    @Test("a write that changes nothing records nothing; a failing batch records nothing")
    func outboxRecordsOnlyChanges() async throws {
        try await withSyncServer { server, _ in
            let replica = try Replica(server: server, clock: TestClock())
            try await replica.engine.sync()
            let engm = try #require(try await replica.airports.find("ENGM"))
            try await replica.airports.upsert(engm)
            #expect(try await replica.engine.pendingChanges().isEmpty)
            var edited = engm
            edited.name = "Renamed"
            let renamed = edited
            await #expect(throws: DepotError.self) {
                try await replica.engine.store.write { tx in
                    try await tx.repository(Airport.self).upsert(renamed)
                    try await tx.repository(Airport.self).insert(engm)  // the key exists: the whole write fails
                }
            }
            #expect(try await replica.engine.pendingChanges().isEmpty)
            #expect(try await replica.airports.find("ENGM")?.name == engm.name)
        }
    }

    @Test("two replicas editing different fields of one airport offline both land, and all three converge")
    func differentFieldsMerge() async throws {
        try await withSyncServer { server, serverStore in
            let clock = TestClock()
            let a = try Replica(server: server, clock: clock)
            let b = try Replica(server: server, clock: clock)
            try await a.engine.sync()
            try await b.engine.sync()
            try await a.airports.update(where: \.icao == "ENGM", set: [.set(\.name, to: "A's name")])
            try await b.airports.update(where: \.icao == "ENGM", set: [.set(\.city, to: "B's city")])
            try await a.engine.sync()
            let report = try await b.engine.sync()
            #expect(report.conflicts == 0)
            try await a.engine.sync()
            let engm = try await serverStore.repository(Airport.self).find("ENGM")
            #expect(engm?.name == "A's name")
            #expect(engm?.city == "B's city")
            #expect(try await a.all() == serverAirports(serverStore))
            #expect(try await b.all() == serverAirports(serverStore))
        }
    }

    @Test(
        "the same field edited on two replicas: each policy's row is what every replica ends with",
        arguments: ["server wins", "client wins", "last writer wins", "merge"])
    func conflictPolicies(policy: String) async throws {
        try await withSyncServer { server, serverStore in
            let clock = TestClock()
            let conflicts: ConflictPolicy<Airport> =
                switch policy {
                case "server wins": .serverWins
                case "client wins": .clientWins
                case "last writer wins": .lastWriterWins
                default:
                    .merge { conflict in
                        var merged = conflict.remote
                        merged.name = [conflict.base?.name ?? "", conflict.remote.name, conflict.local.name].joined(
                            separator: " / ")
                        return merged
                    }
                }
            let a = try Replica(server: server, conflicts: conflicts, clock: clock)
            let b = try Replica(server: server, conflicts: conflicts, clock: clock)
            try await a.engine.sync()
            try await b.engine.sync()
            let original = try #require(try await a.airports.find("ENGM")).name
            // B edits first (earlier clock), A later; A pushes first.
            try await b.airports.update(where: \.icao == "ENGM", set: [.set(\.name, to: "B")])
            clock.advance(10)
            try await a.airports.update(where: \.icao == "ENGM", set: [.set(\.name, to: "A")])
            try await a.engine.sync()
            let report = try await b.engine.sync()
            #expect(report.conflicts == 1)
            try await a.engine.sync()
            let expected: String =
                switch policy {
                case "server wins": "A"  // A's push reached the server first
                case "client wins": "B"  // the pusher that met the conflict insists
                case "last writer wins": "A"  // A's edit is later than B's
                default: "\(original) / A / B"
                }
            let name = try await serverStore.repository(Airport.self).find("ENGM")?.name
            #expect(name == expected)
            #expect(try await a.all() == serverAirports(serverStore))
            #expect(try await b.all() == serverAirports(serverStore))
            #expect(try await b.engine.pendingChanges().isEmpty)
        }
    }

    @Test("a push dated in the future does not win the next conflict on its fields: the server records its own time")
    func futureDatedPushDoesNotWinForever() async throws {
        try await withSyncServer { server, _ in
            let cheat = try Replica(server: server, clock: TestClock(at: Date(timeIntervalSince1970: 4_102_444_800)))
            let honestClock = TestClock()
            let honest = try Replica(server: server, clock: honestClock)
            try await cheat.engine.sync()
            try await honest.engine.sync()
            try await cheat.airports.update(where: \.icao == "ENGM", set: [.set(\.name, to: "From 2100")])
            try await cheat.engine.sync()
            // An honest edit made after that push, from a base without it: a conflict, which it wins.
            honestClock.set(Date().addingTimeInterval(1))
            try await honest.airports.update(where: \.icao == "ENGM", set: [.set(\.name, to: "Honest")])
            let report = try await honest.engine.sync()
            #expect(report.conflicts == 1)
            #expect(report.pushed == 1, "the honest, later edit is pushed over the future-dated one")
            #expect(try await honest.airports.find("ENGM")?.name == "Honest")
        }
    }

    @Test("a local delete is pushed and reaches the other replica as a tombstone")
    func deletionsTravel() async throws {
        try await withSyncServer { server, serverStore in
            let clock = TestClock()
            let a = try Replica(server: server, clock: clock)
            let b = try Replica(server: server, clock: clock)
            try await a.engine.sync()
            try await b.engine.sync()
            #expect(try await a.airports.remove("ENZV"))
            #expect(try await a.engine.pendingChanges().first?.isDelete == true)
            try await a.engine.sync()
            #expect(try await serverStore.repository(Airport.self).find("ENZV") == nil)
            let report = try await b.engine.sync()
            #expect(report.pulledDeletions == 1)
            #expect(try await b.airports.find("ENZV") == nil)
            #expect(try await b.all() == serverAirports(serverStore))
        }
    }

    @Test(
        "a delete that meets a changed server row follows the policy: asked of a merge, and under last writer wins a later server edit survives an earlier delete",
        arguments: [
            "server wins", "client wins", "last writer wins, server edit later", "last writer wins, delete later",
            "merge keeps", "merge deletes",
        ])
    func deleteConflicts(policy: String) async throws {
        try await withSyncServer { server, serverStore in
            let asked = Mutex<[Conflict<Airport>]>([])
            let conflicts: ConflictPolicy<Airport> =
                switch policy {
                case "server wins": .serverWins
                case "client wins": .clientWins
                case "merge keeps", "merge deletes":
                    .merge({ $0.remote }) { conflict in
                        asked.withLock { $0.append(conflict) }
                        return policy == "merge deletes"
                    }
                default: .lastWriterWins
                }
            let deleterClock = TestClock()
            let editorClock = TestClock()
            let deleter = try Replica(server: server, conflicts: conflicts, clock: deleterClock)
            let editor = try Replica(server: server, clock: editorClock)
            try await deleter.engine.sync()
            try await editor.engine.sync()
            // The deleter removes ENGM offline; the editor renames it and pushes first.
            if policy == "last writer wins, delete later" { deleterClock.advance(60) }
            if policy == "last writer wins, server edit later" { editorClock.advance(60) }
            #expect(try await deleter.airports.remove("ENGM"))
            try await editor.airports.update(where: \.icao == "ENGM", set: [.set(\.name, to: "Renamed")])
            try await editor.engine.sync()
            let report = try await deleter.engine.sync()
            #expect(report.conflicts == 1)
            let deleteStands = ["client wins", "last writer wins, delete later", "merge deletes"].contains(policy)
            let onServer = try await serverStore.repository(Airport.self).find("ENGM")
            #expect(
                (onServer == nil) == deleteStands, "\(policy): ENGM on the server is \(String(describing: onServer))")
            if !deleteStands { #expect(onServer?.name == "Renamed") }
            if policy.hasPrefix("merge") {
                let conflict = try #require(asked.withLock { $0.first }, "the merge was asked")
                #expect(conflict.isDelete)
                #expect(conflict.remote.name == "Renamed")
                #expect(conflict.base?.name == conflict.local.name)
            }
            try await editor.engine.sync()
            #expect(try await deleter.all() == serverAirports(serverStore))
            #expect(try await editor.all() == serverAirports(serverStore))
            #expect(try await deleter.engine.pendingChanges().isEmpty)
        }
    }

    @Test("a change the server refuses is kept as a typed rejection; discard restores, rebase pushes the fix")
    func rejections() async throws {
        try await withSyncServer { server, serverStore in
            let replica = try Replica(server: server, clock: TestClock())
            try await replica.engine.sync()
            let original = try #require(try await replica.airports.find("ENGM"))
            let tooLong = String(repeating: "x", count: 500)
            try await replica.airports.update(where: \.icao == "ENGM", set: [.set(\.name, to: tooLong)])
            try await replica.airports.update(where: \.icao == "ENBR", set: [.set(\.city, to: "Bergen!")])
            let report = try await replica.engine.sync()
            #expect(report.rejected == 1)
            #expect(report.pushed == 1)  // the other row's edit is not held back
            let rejected = try await replica.engine.rejectedChanges()
            #expect(rejected.count == 1)
            let rejection = try #require(rejected.first?.rejection)
            #expect(rejection.status == 422)
            #expect(rejection.message.contains("name"), "\(rejection.message)")
            #expect(try await replica.engine.status().rejectedChanges == 1)
            // Not retried forever: the next sync leaves it as it is.
            #expect(try await replica.engine.sync().requests == 1)
            #expect(try await replica.engine.rejectedChanges().count == 1)

            let change = try #require(rejected.first)
            try await replica.engine.rebase(change, onto: Patch<Airport>(key: "ENGM").set(\.name, "Oslo lufthavn"))
            #expect(try await replica.airports.find("ENGM")?.name == "Oslo lufthavn")
            try await replica.engine.sync()
            #expect(try await serverStore.repository(Airport.self).find("ENGM")?.name == "Oslo lufthavn")

            try await replica.airports.update(where: \.icao == "ENGM", set: [.set(\.name, to: tooLong)])
            try await replica.engine.sync()
            let again = try #require(try await replica.engine.rejectedChanges().first)
            try await replica.engine.discard(again)
            #expect(try await replica.airports.find("ENGM")?.name == "Oslo lufthavn")
            #expect(try await replica.engine.pendingChanges().isEmpty)
            _ = original
        }
    }

    @Test("discarding a rejected edit puts back the server's latest value, not the one the edit started from")
    func discardRestoresTheServersValue() async throws {
        try await withSyncServer { server, serverStore in
            let replica = try Replica(server: server, clock: TestClock())
            try await replica.engine.sync()
            try await replica.airports.update(
                where: \.icao == "ENGM", set: [.set(\.name, to: String(repeating: "x", count: 500))])
            try await replica.engine.sync()
            _ = try await RawPush.patch(server, "ENGM", #"{"name": "Changed elsewhere"}"#)
            try await replica.engine.sync()
            // The pulled name is under the waiting edit…
            #expect(try await replica.airports.find("ENGM")?.name.count == 500)
            let rejected = try #require(try await replica.engine.rejectedChanges().first)
            try await replica.engine.discard(rejected)
            // …and comes back when the edit is discarded.
            #expect(try await replica.airports.find("ENGM")?.name == "Changed elsewhere")
            #expect(try await replica.all() == serverAirports(serverStore))
            #expect(try await replica.engine.sync().requests == 1)
        }
    }

    @Test("discarding waiting edits in any order puts back the server's row under the edits that stay")
    func discardAnyOrder() async throws {
        try await withSyncServer { server, _ in
            for order in [[0, 1], [1, 0]] {
                let replica = try Replica(server: server, clock: TestClock())
                try await replica.engine.sync()
                let original = try #require(try await replica.airports.find("ENBR")).name
                try await replica.airports.update(where: \.icao == "ENBR", set: [.set(\.name, to: "A")])
                try await replica.airports.update(where: \.icao == "ENBR", set: [.set(\.name, to: "B")])
                let waiting = try await replica.engine.pendingChanges()
                #expect(waiting.count == 2)
                try await replica.engine.discard(waiting[order[0]])
                // The edit that stays is what shows.
                #expect(try await replica.airports.find("ENBR")?.name == (order[0] == 0 ? "B" : "A"))
                try await replica.engine.discard(waiting[order[1]])
                #expect(try await replica.airports.find("ENBR")?.name == original)
                #expect(try await replica.engine.pendingChanges().isEmpty)
            }
        }
    }

    @Test("an action on a listed change that was pushed since fails, and never lands on a newer edit")
    func staleChangeIsRefused() async throws {
        try await withSyncServer { server, _ in
            let replica = try Replica(server: server, clock: TestClock())
            try await replica.engine.sync()
            try await replica.airports.update(where: \.icao == "ENBR", set: [.set(\.name, to: "First")])
            let listed = try #require(try await replica.engine.pendingChanges().first)
            try await replica.engine.sync()
            try await replica.airports.update(where: \.icao == "ENZV", set: [.set(\.name, to: "Second")])
            #expect(try await replica.engine.pendingChanges().first?.sequence == listed.sequence)  // the number again
            await #expect(throws: DepotError.self) { try await replica.engine.discard(listed) }
            #expect(try await replica.airports.find("ENZV")?.name == "Second")
            #expect(try await replica.engine.pendingChanges().count == 1)
        }
    }

    @Test("a feed change of a row deleted here (its delete not pushed yet) is skipped, not a page that fails forever")
    func changeOfLocallyDeletedRow() async throws {
        try await withSyncServer { server, serverStore in
            let clock = TestClock()
            let replica = try Replica(server: server, clock: clock)
            try await replica.engine.sync()
            #expect(try await replica.airports.remove("ENZV"))
            _ = try await RawPush.patch(server, "ENZV", #"{"city": "Sola"}"#)
            let pulled = try await replica.engine.pull()
            #expect(pulled.pulledRows == 1)
            #expect(try await replica.airports.find("ENZV") == nil)
            // The delete conflicts (the city changed since, by a write later than the delete): last
            // writer wins keeps the server's row, which comes back here.
            try await replica.engine.sync()
            #expect(try await serverStore.repository(Airport.self).find("ENZV")?.city == "Sola")
            #expect(try await replica.airports.find("ENZV")?.city == "Sola")
            #expect(try await replica.all() == serverAirports(serverStore))
        }
    }

    @Test("the sync status follows edits and syncs: pending changes, last pull, last error, running")
    func statusUpdates() async throws {
        try await withSyncServer { server, _ in
            let replica = try Replica(server: server, clock: TestClock())
            try await replica.engine.sync()
            var updates = replica.engine.statusUpdates().makeAsyncIterator()
            let start = try #require(try await updates.next())
            #expect(start.pendingChanges == 0)
            #expect(start.lastPull != nil)
            #expect(start.lastError == nil)
            try await replica.airports.update(where: \.icao == "ENGM", set: [.set(\.name, to: "Status")])
            var status = try #require(try await updates.next())
            while status.pendingChanges != 1 { status = try #require(try await updates.next()) }
            try await replica.engine.sync()
            while status.pendingChanges != 0 || status.isSyncing { status = try #require(try await updates.next()) }
            #expect(status.lastPush != nil)

            await server.stop()
            try await replica.airports.update(where: \.icao == "ENGM", set: [.set(\.name, to: "Offline")])
            await #expect(throws: HTTPError.self) { try await replica.engine.sync() }
            let failed = try await replica.engine.status()
            #expect(failed.pendingChanges == 1)
            // The server is gone: a refused connection, or — when another suite's server took the freed
            // port meanwhile and never answers (seen in CI) — a timeout. Either is recorded.
            let lastError = try #require(failed.lastError)
            #expect(lastError.contains("connection") || lastError.contains("timed out"), "\(lastError)")
            #expect(!failed.isSyncing)
        }
    }

    @Test("a cursor the server no longer reaches starts a full copy that removes rows it did not deliver")
    func expiredCursorCopiesAgain() async throws {
        var limits = AirportsServer.Limits()
        limits.changeLogLength = 3
        try await withSyncServer(limits: limits) { server, serverStore in
            let replica = try Replica(server: server, clock: TestClock())
            try await replica.engine.sync()
            // A row the server never had (written under the engine), and five server changes: the
            // log keeps three, so the replica's cursor has expired.
            try await replica.engine.base.repository(Airport.self).insert(
                Airport(
                    icao: "ZZZZ", iata: nil, name: "Nowhere", city: nil, subdivision: nil, country: "NO",
                    elevation: 0, latitude: 0, longitude: 0, timeZone: nil, localCode: nil))
            for index in 0..<5 { _ = try await RawPush.patch(server, "ENGM", #"{"name": "Name \#(index)"}"#) }
            let report = try await replica.engine.sync()
            #expect(report.fullCopies == 1)
            #expect(try await replica.airports.find("ZZZZ") == nil)
            #expect(try await replica.all() == serverAirports(serverStore))
        }
    }
}

/// Plain HTTP calls made by "another client" (not the engine under test).
enum RawPush {
    static func patch(_ server: AirportsServer, _ icao: String, _ body: String) async throws -> Int {
        let client = APIClient(baseURL: server.baseURL, configuration: .writing)
        let record = try JSONDecoder().decode(AirportRecord.self, from: Data(body.utf8).withKey(icao))
        _ = try await client.send(AirportsAPI.Update(record))
        return 200
    }
}

extension Data {
    /// A JSON object with `"icao"` added.
    fileprivate func withKey(_ icao: String) -> Data {
        let text = String(decoding: self, as: UTF8.self)
        return Data(
            text.replacingOccurrences(of: "{", with: #"{"icao": "\#(icao)", "#, options: [], range: text.range(of: "{"))
                .utf8)
    }
}
