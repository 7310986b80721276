import Foundation
import Testing

@testable import DepotHTTP

extension TransportTests {
    /// The test server, a client on `kind` that shares identical requests, and a fresh id for
    /// `/held/<id>`.
    static func sharing(_ kind: TransportKind) async throws -> (TestServer, APIClient, String) {
        (try await TestServer.shared(), try await kind.client { $0.sharesIdenticalRequests = true }, UUID().uuidString)
    }

    /// A GET of `/held/<id>` (see ``HeldRequests``).
    static func held(_ id: String, status: Int = 200) -> AnyEndpoint<User> {
        AnyEndpoint<User>(.get, "/held/\(id)", query: [URLQueryItem(name: "status", value: "\(status)")])
    }

    @Test("Identical GETs in flight at once send one request, and each caller gets the response", arguments: transports)
    func identicalGETsShareOneRequest(kind: TransportKind) async throws {
        let (server, client, id) = try await Self.sharing(kind)
        let callers = (0..<3).map { _ in Task { try await client.send(Self.held(id)) } }
        await client.shared.arrivals(3)
        await HeldRequests.arrived(id).wait()
        HeldRequests.released(id).fire()
        for caller in callers { #expect(try await caller.value == User(id: 1, name: "held")) }
        #expect(server.counters.count("held-\(id)") == 1)
        #expect(client.shared.inFlight == 0)
        // Once answered, the next call sends its own request.
        #expect(try await client.send(Self.held(id)) == User(id: 1, name: "held"))
        #expect(server.counters.count("held-\(id)") == 2)
    }

    @Test("A shared failure reaches every caller as its own HTTPError", arguments: transports)
    func sharedFailure(kind: TransportKind) async throws {
        let (server, client, id) = try await Self.sharing(kind)
        let callers = (0..<2).map { _ in Task { await httpError { try await client.send(Self.held(id, status: 404)) } }
        }
        await client.shared.arrivals(2)
        HeldRequests.released(id).fire()
        for caller in callers {
            let error = await caller.value
            #expect(error?.kind == .notFound)
            #expect(error?.endpoint == "GET /held/\(id)")
        }
        #expect(server.counters.count("held-\(id)") == 1)
    }

    @Test("A cancelled caller leaves alone: the others still get the shared response", arguments: transports)
    func cancelledCallerLeavesAlone(kind: TransportKind) async throws {
        let (server, client, id) = try await Self.sharing(kind)
        let staying = Task { try await client.send(Self.held(id)) }
        let leaving = Task { await httpError { try await client.send(Self.held(id)) } }
        await client.shared.arrivals(2)
        await HeldRequests.arrived(id).wait()
        leaving.cancel()
        #expect(await leaving.value?.kind == .cancelled)
        #expect(client.shared.inFlight == 1, "the request goes on for the caller still waiting")
        HeldRequests.released(id).fire()
        #expect(try await staying.value == User(id: 1, name: "held"))
        #expect(server.counters.count("held-\(id)") == 1)
    }

    @Test(
        "When the last caller leaves, the shared request is given up and the next call sends anew",
        arguments: transports)
    func lastCallerLeaving(kind: TransportKind) async throws {
        let (server, client, id) = try await Self.sharing(kind)
        let only = Task { await httpError { try await client.send(Self.held(id)) } }
        await client.shared.arrivals(1)
        await HeldRequests.arrived(id).wait()
        only.cancel()
        #expect(await only.value?.kind == .cancelled)
        #expect(client.shared.inFlight == 0)
        HeldRequests.released(id).fire()
        #expect(try await client.send(Self.held(id)) == User(id: 1, name: "held"))
        #expect(server.counters.count("held-\(id)") == 2)
    }

    @Test("Calls that differ in URL, header fields or the setting are not shared", arguments: transports)
    func notShared(kind: TransportKind) async throws {
        let (server, client, id) = try await Self.sharing(kind)
        var traced = Self.held(id)
        traced.headers["X-Trace"] = "other"
        let first = Task { try await client.send(Self.held(id)) }
        let otherHeaders = Task { try await client.send(traced) }
        let otherURL = Task { try await client.send(Self.held(id, status: 200).adding(query: "page", "2")) }
        await client.shared.arrivals(3)
        #expect(client.shared.inFlight == 3)
        let separate = try await kind.client()  // off by default
        let unshared = (0..<2).map { _ in Task { try await separate.send(Self.held(id)) } }
        HeldRequests.released(id).fire()
        for caller in [first, otherHeaders, otherURL] + unshared {
            #expect(try await caller.value == User(id: 1, name: "held"))
        }
        #expect(server.counters.count("held-\(id)") == 5)
        #expect(separate.shared.inFlight == 0)
    }
}

extension TransportTests {
    @Test(
        "Identical POSTs in flight at once each send their own request (only GET and HEAD are shared)",
        arguments: transports)
    func identicalPOSTsAreNotShared(kind: TransportKind) async throws {
        let (server, client, id) = try await Self.sharing(kind)
        let post = AnyEndpoint<User>(.post, "/held/\(id)")
        let callers = (0..<2).map { _ in Task { try await client.send(post) } }
        // Both reach the server while neither is answered: two exchanges, none shared.
        await HeldRequests.arrived("\(id)#1").wait()
        await HeldRequests.arrived("\(id)#2").wait()
        #expect(client.shared.inFlight == 0)
        HeldRequests.released(id).fire()
        for caller in callers { #expect(try await caller.value == User(id: 1, name: "held")) }
        #expect(server.counters.count("held-\(id)") == 2)
    }
}

extension AnyEndpoint {
    /// This endpoint with one more query item.
    fileprivate func adding(query name: String, _ value: String) -> AnyEndpoint {
        var endpoint = self
        endpoint.query.append(URLQueryItem(name: name, value: value))
        return endpoint
    }
}
