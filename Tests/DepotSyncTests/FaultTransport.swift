import DepotHTTP
import Foundation
import Synchronization

/// A transport in front of the real one (AsyncHTTPClient to a server on 127.0.0.1) that injects
/// faults: a response lost after the server handled the request (the client sees a dropped
/// connection and sends it again), a request delivered twice, a burst of 503s that never reach
/// the server, and random delays that reorder concurrent clients. Seeded: a failing run repeats.
final class FaultTransport: Transport {
    struct Rates: Sendable {
        var dropResponse = 0.0
        var duplicate = 0.0
        var serverErrorBurst = 0.0
        var delay = 0.0

        static let none = Rates()
        static let harsh = Rates(dropResponse: 0.15, duplicate: 0.15, serverErrorBurst: 0.08, delay: 0.3)
    }

    private struct State {
        var random: UInt64
        var rates: Rates
        var burstLeft = 0
        var sent = 0
        var faults: [String: Int] = [:]
    }

    private let base: any Transport
    private let state: Mutex<State>

    init(seed: UInt64, rates: Rates, base: any Transport = APIClient.defaultTransport) {
        self.base = base
        state = Mutex(State(random: seed &+ 0x9E37_79B9_7F4A_7C15, rates: rates))
    }

    /// Requests that reached the transport (attempts, retries included).
    var sent: Int { state.withLock { $0.sent } }
    /// Faults injected, by kind.
    var faults: [String: Int] { state.withLock { $0.faults } }

    /// Turns faults on or off (a test ends with a quiet network to converge).
    func set(_ rates: Rates) { state.withLock { $0.rates = rates } }

    private enum Fault { case none, drop, duplicate, serverError, delay(Duration) }

    private func next() -> Fault {
        state.withLock { state in
            state.sent += 1
            func roll() -> Double {
                state.random = state.random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return Double(state.random >> 11) / Double(1 << 53)
            }
            if state.burstLeft > 0 {
                state.burstLeft -= 1
                state.faults["503", default: 0] += 1
                return .serverError
            }
            let rates = state.rates
            let dice = roll()
            if dice < rates.serverErrorBurst {
                state.burstLeft = Int(roll() * 4)  // 1 to 4 in a row
                state.faults["503", default: 0] += 1
                return .serverError
            }
            if dice < rates.serverErrorBurst + rates.dropResponse {
                state.faults["drop", default: 0] += 1
                return .drop
            }
            if dice < rates.serverErrorBurst + rates.dropResponse + rates.duplicate {
                state.faults["duplicate", default: 0] += 1
                return .duplicate
            }
            if roll() < rates.delay { return .delay(.milliseconds(Int(roll() * 15))) }
            return .none
        }
    }

    func send(_ request: TransportRequest, maximumBodySize: Int) async throws -> TransportResponse {
        switch next() {
        case .none:
            return try await base.send(request, maximumBodySize: maximumBodySize)
        case .drop:
            _ = try await base.send(request, maximumBodySize: maximumBodySize)
            throw URLError(.networkConnectionLost)
        case .duplicate:
            _ = try await base.send(request, maximumBodySize: maximumBodySize)
            return try await base.send(request, maximumBodySize: maximumBodySize)
        case .serverError:
            return TransportResponse(
                status: 503, headers: ["Content-Type": "application/json"], body: Data(#"{"error":"injected"}"#.utf8))
        case .delay(let duration):
            try await Task.sleep(for: duration)
            return try await base.send(request, maximumBodySize: maximumBodySize)
        }
    }
}
