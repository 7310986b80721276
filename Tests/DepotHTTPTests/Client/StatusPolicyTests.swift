import DepotHTTP
import Foundation
import Testing

@Suite("Status policy")
struct StatusPolicyTests {
    @Test("Default kinds per status")
    func defaults() {
        let policy = StatusPolicy()
        let kinds = [400, 401, 403, 404, 418, 426, 500, 501, 502, 599].map { policy.kind(for: $0) }
        #expect(
            kinds == [
                .unexpectedStatus, .unauthorized, .forbidden, .notFound, .unexpectedStatus, .updateRequired,
                .serverError,
                .updateRequired, .serverError, .serverError,
            ])
    }

    @Test("Overrides, update-required statuses and message keys are configurable")
    func configured() async throws {
        var policy = StatusPolicy()
        policy.overrides[402] = HTTPError.Kind("payment required")
        policy.updateRequiredStatuses = [410]
        policy.messageKeys = ["reason"]
        #expect(policy.kind(for: 402) == HTTPError.Kind("payment required"))
        #expect(policy.kind(for: 410) == .updateRequired)
        #expect(policy.kind(for: 426) == .unexpectedStatus)
        #expect(policy.kind(for: 501) == .serverError)
        #expect(policy.serverMessage(in: Data(#"{"message": "m", "reason": "r"}"#.utf8)) == "r")
        #expect(policy.serverMessage(in: Data(#"["reason"]"#.utf8)) == nil)
        #expect(policy.serverMessage(in: Data("reason: text".utf8)) == nil)

        let stub = StubTransport()
        stub.stub(.get, "/pay", .text(#"{"reason": "card declined"}"#, status: 402))
        var configuration = APIClient.Configuration.testing()
        configuration.statusPolicy = policy
        let client = APIClient(baseURL: StubTransportTests.base, transport: stub, configuration: configuration)
        let error = await httpError { try await client.send(Call(.get, "/pay")) }
        #expect(error?.kind.name == "payment required")
        #expect(
            error?.description == #"GET /pay: payment required (402): card declined; body: {"reason": "card declined"}"#
        )
    }

    @Test("An endpoint may accept statuses outside 2xx")
    func acceptedStatuses() async throws {
        let stub = StubTransport()
        stub.stub(.get, "/maybe", .status(404))
        let client = APIClient(baseURL: StubTransportTests.base, transport: stub, configuration: .testing())
        let endpoint = AnyEndpoint<Int>(
            .get, "/maybe", acceptedStatuses: 200..<500, decoder: .init { response, _ in response.status })
        #expect(try await client.send(endpoint) == 404)
    }
}
