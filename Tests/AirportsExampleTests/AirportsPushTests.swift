import AirportsExample
import Depot
import DepotSQL
import DepotSQLite
import DepotTestSupport
import Foundation
import Testing

/// The example's sync pushes (DepotSyncServer's), from outside with plain HTTP: the defects the
/// hand-written server had, each pinned.
@Suite("Pushes and their idempotency keys")
struct AirportsPushTests {
    static func body(_ icao: String, name: String, base: String) -> String {
        #"{"key": ["\#(icao)"], "operation": "set", "changes": {"name": "\#(name)"}, "base": {"name": "\#(base)"}, "#
            + #""edited_at": "2027-01-15T08:00:00Z"}"#
    }

    @Test(
        "an Idempotency-Key is bound to its request: the same request answers the first answer, another body or airport 422 naming the key, applying nothing"
    )
    func keysAreBoundToTheirRequest() async throws {
        try await withServer { server, store in
            let airports = store.repository(Airport.self)
            let engm = try #require(try await airports.find("ENGM")).name
            let enzv = try #require(try await airports.find("ENZV")).name
            let first = try await RawHTTP.push(server, key: "k1", Self.body("ENGM", name: "First", base: engm))
            #expect(first.status == 200)
            // The same request again (other JSON spacing): the stored answer, applied once.
            let again = try await RawHTTP.push(
                server, key: "k1",
                Self.body("ENGM", name: "First", base: engm).replacingOccurrences(of: ": ", with: ":"))
            #expect(again.status == 200)
            #expect(again.body == first.body)
            // Another edit under the same key: refused, not told "applied".
            let other = try await RawHTTP.push(server, key: "k1", Self.body("ENGM", name: "Second", base: "First"))
            #expect(other.status == 422)
            #expect(
                other.error?.contains("Idempotency-Key 'k1' was used for another request") == true,
                "\(other.error ?? "")")
            #expect(try await airports.find("ENGM")?.name == "First")
            // The same key for another airport: refused too.
            let elsewhere = try await RawHTTP.push(server, key: "k1", Self.body("ENZV", name: "Moved", base: enzv))
            #expect(elsewhere.status == 422)
            #expect(try await airports.find("ENZV")?.name == enzv)
            #expect(try await RawHTTP.get(server, "/dataset").object["revision"] as? Int == 1)
        }
    }

    @Test("push keys are pruned with the change log: a client cannot grow the database without bound")
    func keysArePruned() async throws {
        var limits = AirportsServer.Limits()
        limits.changeLogLength = 3
        try await withServer(limits: limits) { server, store in
            let name = try #require(try await store.repository(Airport.self).find("ENGM")).name
            var base = name
            for index in 0..<8 {
                let answer = try await RawHTTP.push(
                    server, key: "key \(index)", Self.body("ENGM", name: "Name \(index)", base: base))
                #expect(answer.status == 200)
                base = "Name \(index)"
            }
            let kept = try await store.sql("SELECT count(*) FROM depot_sync_ledger").rows.first?.first
            let log = try await store.sql("SELECT count(*) FROM depot_sync_log").rows.first?.first
            #expect(log == .integer(3))
            #expect(kept == .integer(3), "one key per logged change")
        }
    }

    @Test("an import forgets the old dataset's push keys: a replayed key is a new push, not told it was applied")
    func importForgetsKeys() async throws {
        try await withServer { server, store in
            let name = try #require(try await store.repository(Airport.self).find("ENGM")).name
            let push = Self.body("ENGM", name: "Edited", base: name)
            #expect(try await RawHTTP.push(server, key: "before", push).status == 200)
            _ = try await AirportImporter.run(csv: try #require(AirportsCSV.bundledURL), into: store)
            #expect(try await store.repository(Airport.self).find("ENGM")?.name == name)  // the import put it back
            let replayed = try await RawHTTP.push(server, key: "before", push)
            #expect(replayed.status == 200)
            #expect(try await store.repository(Airport.self).find("ENGM")?.name == "Edited")
        }
    }

    @Test(
        "a push without the base of what it changes is a conflict answered with the server's row, never a blind overwrite",
        arguments: [
            #"{"key": ["ENGM"], "operation": "set", "changes": {"name": "Blind"}, "base": null, "edited_at": "2027-01-01T00:00:00Z"}"#,
            #"{"key": ["ENGM"], "operation": "set", "changes": {"name": "Blind"}, "base": {}, "edited_at": "2027-01-01T00:00:00Z"}"#,
            #"{"key": ["ENGM"], "operation": "delete", "changes": {}, "base": null, "edited_at": "2027-01-01T00:00:00Z"}"#,
        ])
    func noBlindOverwrite(body: String) async throws {
        try await withServer { server, store in
            let before = try await store.repository(Airport.self).find("ENGM")
            let answer = try await RawHTTP.push(server, key: "blind", body)
            #expect(answer.status == 409)
            #expect(answer.object["message"].map { "\($0)".contains("the push carries no base value of") } == true)
            #expect((answer.object["row"] as? [String: Any])?["name"] as? String == before?.name)
            #expect(try await store.repository(Airport.self).find("ENGM") == before)
        }
    }

    @Test("a pushed airport breaking the API's rules (a latitude of 95) is refused (422) naming the member")
    func pushesKeepTheRules() async throws {
        try await withServer { server, store in
            let before = try #require(try await store.repository(Airport.self).find("ENGM"))
            let answer = try await RawHTTP.push(
                server, key: "north",
                #"{"key": ["ENGM"], "operation": "set", "changes": {"lat": 95}, "base": {"lat": \#(before.latitude)}, "#
                    + #""edited_at": "2027-01-01T00:00:00Z"}"#)
            #expect(answer.status == 422)
            #expect(answer.error?.contains("'lat'") == true, "\(answer.error ?? "")")
            #expect(try await store.repository(Airport.self).find("ENGM") == before)
        }
    }

    @Test(
        "writes need the server's write token: none or a wrong one answers 401, a server without tokens 403, and nothing changes; reads stay open",
        arguments: [nil, "Bearer wrong", "Basic \(testWriteToken)", "Bearer \(testWriteToken)x"] as [String?])
    func writesNeedTheToken(authorization: String?) async throws {
        try await withServer { server, store in
            let before = try await store.repository(Airport.self).find("ENGM")
            let name = try #require(before).name
            var headers = ["Idempotency-Key": "k"]
            headers["Authorization"] = authorization
            let url = try #require(URL(string: server.baseURL.absoluteString + "/airports/ENGM"))
            let patch = try await RawHTTP.send("PATCH", url, body: #"{"name": "Anonymous"}"#, headers: headers)
            #expect(patch.status == 401)
            let push = try await RawHTTP.send(
                "POST", try #require(URL(string: server.baseURL.absoluteString + "/sync/airports/push")),
                body: Self.body("ENGM", name: "Anonymous", base: name), headers: headers)
            #expect(push.status == 401)
            #expect(push.error?.isEmpty == false)
            #expect(try await store.repository(Airport.self).find("ENGM") == before)
            #expect(try await RawHTTP.get(server, "/airports/ENGM").status == 200)
        }
        // A server started without tokens takes no writes at all, whatever a client sends.
        let store = try SQLiteStore.temporary()
        try await store.repository(Airport.self).insert(
            Airport(
                icao: "ENGM", iata: nil, name: "Oslo", city: nil, subdivision: nil, country: "NO", elevation: 0,
                latitude: 60, longitude: 11, timeZone: nil, localCode: nil))
        let readOnly = try await AirportsServer.start(store: store)
        let answer = try await RawHTTP.patch(readOnly, "ENGM", #"{"name": "Anonymous"}"#)
        let push = try await RawHTTP.push(readOnly, key: "ro", Self.body("ENGM", name: "Anonymous", base: "Oslo"))
        let feed = try await RawHTTP.get(readOnly, "/sync/airports/feed")
        await readOnly.stop()
        #expect(answer.status == 403)
        #expect(answer.error?.contains("read-only") == true)
        #expect(push.status == 403)
        #expect(push.error?.contains("read-only") == true)
        #expect(feed.status == 200)
        #expect(try await store.repository(Airport.self).find("ENGM")?.name == "Oslo")
    }

    @Test("a store whose sync log head was removed underneath answers 500 with an incident, never an empty epoch")
    func missingLogHeadIsNotAnEmptyEpoch() async throws {
        try await withServer { server, store in
            try await store.write { tx in _ = try await tx.sql("DELETE FROM depot_sync_head") }
            for path in ["/dataset", "/sync/airports/feed"] {
                let answer = try await RawHTTP.get(server, path)
                #expect(answer.status == 500, "\(path)")
                #expect(answer.error?.hasPrefix("the server could not answer this request (incident ") == true)
            }
        }
    }
}
