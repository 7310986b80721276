import Depot
import DepotHTTP
import DepotSQL
import Foundation
import Synchronization

/// A transport in front of the real one (AsyncHTTPClient to a server on 127.0.0.1) that injects
/// faults: a response lost after the server handled the request (the client sees a dropped
/// connection and sends it again), a request delivered twice, a burst of 503s that never reach
/// the server, and random delays that reorder concurrent clients. Seeded: a failing run repeats.
public final class FaultTransport: Transport {
    /// How often each fault strikes, per request (0…1).
    public struct Rates: Sendable {
        /// A response lost after the server handled the request.
        public var dropResponse = 0.0
        /// A request delivered twice.
        public var duplicate = 0.0
        /// A burst of 503s that never reach the server.
        public var serverErrorBurst = 0.0
        /// A random delay (reorders concurrent clients).
        public var delay = 0.0

        /// Rates of each fault, 0…1 per request (none by default).
        public init(dropResponse: Double = 0, duplicate: Double = 0, serverErrorBurst: Double = 0, delay: Double = 0) {
            self.dropResponse = dropResponse
            self.duplicate = duplicate
            self.serverErrorBurst = serverErrorBurst
            self.delay = delay
        }

        /// No faults.
        public static let none = Rates()
        /// Every kind, often.
        public static let harsh = Rates(dropResponse: 0.15, duplicate: 0.15, serverErrorBurst: 0.08, delay: 0.3)
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

    /// Faults at `rates`, seeded, in front of `base`.
    public init(seed: UInt64, rates: Rates, base: any Transport = APIClient.defaultTransport) {
        self.base = base
        state = Mutex(State(random: seed &+ 0x9E37_79B9_7F4A_7C15, rates: rates))
    }

    /// Requests that reached the transport (attempts, retries included).
    public var sent: Int { state.withLock { $0.sent } }
    /// Faults injected, by kind.
    public var faults: [String: Int] { state.withLock { $0.faults } }

    /// Turns faults on or off (a test ends with a quiet network to converge).
    public func set(_ rates: Rates) { state.withLock { $0.rates = rates } }

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

    /// Sends `request` through `base`, or injects a fault.
    public func send(_ request: TransportRequest, maximumBodySize: Int) async throws -> TransportResponse {
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

/// Runs `body` until it succeeds, at most `attempts` times (a sync through a faulty network may
/// fail a few times in a row); throws the last error.
@discardableResult
public func retryingFailures<T>(_ attempts: Int = 20, _ body: () async throws -> T) async throws -> T {
    var lastError: (any Error)?
    for _ in 0..<attempts {
        do {
            return try await body()
        } catch {
            lastError = error
        }
    }
    throw lastError ?? CancellationError()
}

/// How many pushes a DepotSyncServer store keeps the answer of (`depot_sync_ledger`), and how many
/// changes it logged (`depot_sync_log`): a push applied twice would log twice under one key.
public func syncLedgerAndLog(of store: any SQLRunning) async throws -> (kept: Int64, logged: Int64) {
    let kept = try await store.sql("SELECT count(*) FROM depot_sync_ledger").rows.first?.first
    let logged = try await store.sql("SELECT count(*) FROM depot_sync_log").rows.first?.first
    guard case .integer(let pushes)? = kept, case .integer(let changes)? = logged else {
        throw DepotError(
            .decodingFailed,
            "the sync ledger and log did not count: \(String(describing: kept)), \(String(describing: logged))")
    }
    return (pushes, changes)
}
