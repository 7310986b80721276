import AirportsExample
import Depot
import DepotSQLite
import DepotTestSupport
import Foundation
import Testing

/// `airports sync` killed (SIGKILL) at arbitrary moments and started again: nothing lost, nothing
/// applied twice, and the client ends equal to the server.
@Suite("airports sync killed mid-sync", .timeLimit(.minutes(10)))
struct SyncKillTests {
    /// Kill delays in milliseconds: fixed, so a failing run repeats.
    static let delays = [35, 180, 90, 260, 15, 120, 60, 220, 5, 150, 75, 300]

    /// Starts `airports sync`, kills it after `milliseconds` (if it has not finished), and waits.
    /// Returns whether it was killed before it finished.
    static func syncAndKill(_ binary: URL, _ arguments: [String], after milliseconds: Int) async throws -> Bool {
        let child = try ChildProcess.run(binary, ["sync"] + arguments, output: .discard, errors: .discard)
        try await Task.sleep(for: .milliseconds(milliseconds))
        let killed = kill(child.processIdentifier, SIGKILL) == 0
        try await offPool { child.waitUntilExit() }
        return killed && child.terminationStatus != 0
    }

    @Test(
        "killed during the first copy and during pushes and pulls, the client resumes and converges; each edit is applied once"
    )
    func killLoop() async throws {
        let binary = try airportsBinary()
        try await withServer { server, serverStore in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kill-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let clientPath = folder.appendingPathComponent("client.sqlite").path
            let arguments = [
                "--from", server.baseURL.absoluteString, "--store", clientPath, "--page-size", "700", "--token",
                testWriteToken,
            ]
            var kills = 0
            for delay in Self.delays.prefix(6) where try await Self.syncAndKill(binary, arguments, after: delay * 2) {
                kills += 1
            }
            let finished = try await runProcess(binary, ["sync"] + arguments)
            #expect(finished.status == 0, "\(finished.errors)")
            let serverRows = try await serverStore.repository(Airport.self).fetch(orderBy: [.ascending(\.icao)])
            var clientRows = try await SQLiteStore(path: clientPath).repository(Airport.self).fetch(
                orderBy: [.ascending(\.icao)])
            #expect(clientRows == serverRows)

            // Offline edits, and changes on the server, then syncs killed midway.
            let edited = ["ENGM", "ENBR", "ENZV", "EKCH", "BIKF", "ESSA", "EFHK", "EGLL"]
            for (index, icao) in edited.enumerated() {
                let answer = try await runProcess(
                    binary,
                    ["edit", "--store", clientPath, icao, "--city", "Edited \(index)", "--elevation", "\(index).5"])
                #expect(answer.status == 0, "\(answer.errors)")
            }
            for icao in ["LFPG", "EDDF", "KJFK", "ENGM"] {
                #expect(try await RawHTTP.patch(server, icao, #"{"name": "Renamed \#(icao)"}"#).status == 200)
            }
            for delay in Self.delays.suffix(6) where try await Self.syncAndKill(binary, arguments, after: delay / 3) {
                kills += 1
            }
            let last = try await runProcess(binary, ["sync"] + arguments)
            #expect(last.status == 0, "\(last.errors)")
            #expect(kills > 0, "no sync was killed before it finished")

            let client = try SQLiteStore(path: clientPath)
            clientRows = try await client.repository(Airport.self).fetch(orderBy: [.ascending(\.icao)])
            let serverNow = try await serverStore.repository(Airport.self).fetch(orderBy: [.ascending(\.icao)])
            #expect(clientRows == serverNow)
            for (index, icao) in edited.enumerated() {
                let airport = serverNow.first { $0.icao == icao }
                #expect(airport?.city == "Edited \(index)", "\(icao)")
                #expect(airport?.elevation == Double(index) + 0.5, "\(icao)")
            }
            #expect(serverNow.first { $0.icao == "LFPG" }?.name == "Renamed LFPG")
            // Each edit applied exactly once: one kept push answer and one sync-log entry per edit.
            let pushes = try await serverStore.rows("SELECT COUNT(*) FROM depot_sync_ledger").rows.first?.first
            let changes = try await serverStore.rows("SELECT COUNT(*) FROM depot_sync_log").rows.first?.first
            #expect(pushes == .integer(Int64(edited.count)))
            #expect(changes == .integer(Int64(edited.count + 4)))
            let outbox = try await client.rows("SELECT COUNT(*) FROM depot_sync_outbox").rows.first?.first
            #expect(outbox == .integer(0))
        }
    }
}
