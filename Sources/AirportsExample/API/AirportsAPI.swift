import Depot
import DepotHTTP
import Foundation

/// The airports API's calls, each defined once: request and response type.
///
/// ```swift
/// let client = APIClient(baseURL: URL(string: "http://127.0.0.1:8080")!)
/// let norway = try await client.send(AirportsAPI.List(country: "NO", limit: 500))
/// let renamed = try await client.send(AirportsAPI.Update(AirportRecord(icao: "ENGM", name: "Gardermoen")))
/// ```
///
/// Every call declares the API's error body, so a refused call's message is typed:
///
/// ```swift
/// do {
///     _ = try await client.send(AirportsAPI.Get(icao: "ZZZZ"))
/// } catch let error as HTTPError {
///     // The API's sentence; a body that is not a Problem is named in `detail` instead.
///     print(error.kind, error.errorBody(as: AirportsAPI.Problem.self)?.error ?? error.detail)
/// }
/// ```
public enum AirportsAPI {
    /// The body of every error the API answers: `{"error": "no airport with icao 'ZZZZ'"}`.
    public struct Problem: Decodable, Sendable, Equatable {
        /// What was wrong, in a sentence.
        public var error: String
    }

    /// `GET /airports`: airports in icao order (or nearest first with `near`).
    public struct List: Endpoint {
        /// Whole records, one per airport.
        public typealias Response = [AirportRecord]
        /// `{\"error\": …}`.
        public typealias ErrorBody = Problem
        /// Only airports of this country code (`country=`); `nil` for every country.
        public var country: String?
        /// Matched case-insensitively against name or city (`q=`); `nil` for no search.
        public var search: String?
        /// Nearest first from this point, with `distance_km` (`near=`); `nil` for icao order.
        public var near: Coordinate?
        /// Only airports whose icao sorts after this one, for paging (`after=`; not with `near`).
        public var after: String?
        /// The most airports to return (`limit=`; the server takes 1 to 10,000).
        public var limit: Int

        /// A listing; by default of every country, in icao order, 100 airports.
        public init(
            country: String? = nil, search: String? = nil, near: Coordinate? = nil, after: String? = nil,
            limit: Int = 100
        ) {
            self.country = country
            self.search = search
            self.near = near
            self.after = after
            self.limit = limit
        }

        /// `/airports`.
        public var path: String { "/airports" }
        /// `limit` always; `country`, `q`, `near` and `after` when set.
        public var query: [URLQueryItem] {
            var items = [URLQueryItem(name: "limit", value: String(limit))]
            if let country { items.append(URLQueryItem(name: "country", value: country)) }
            if let search { items.append(URLQueryItem(name: "q", value: search)) }
            if let near { items.append(URLQueryItem(name: "near", value: "\(near.latitude),\(near.longitude)")) }
            if let after { items.append(URLQueryItem(name: "after", value: after)) }
            return items
        }
    }

    /// `GET /airports/{icao}`.
    public struct Get: Endpoint {
        /// The whole airport.
        public typealias Response = AirportRecord
        /// `{\"error\": …}`.
        public typealias ErrorBody = Problem
        /// The airport's ICAO code.
        public var icao: String
        /// The call for the airport `icao`.
        public init(icao: String) { self.icao = icao }
        /// `/airports/{icao}`.
        public var path: String { "/airports/\(icao)" }
    }

    /// `PATCH /airports/{icao}` with the members `record` carries; answers the whole airport.
    public struct Update: Endpoint {
        /// The whole airport after the update.
        public typealias Response = AirportRecord
        /// `{\"error\": …}`.
        public typealias ErrorBody = Problem
        /// The airport's icao and the members to change; absent members stay as they are.
        public var record: AirportRecord
        /// The call applying `record`.
        public init(_ record: AirportRecord) { self.record = record }
        /// `PATCH`.
        public var method: HTTPMethod { .patch }
        /// `/airports/{icao}`, for `record`'s icao.
        public var path: String { "/airports/\(record.icao)" }
        /// `record` as JSON: only its present members.
        public var body: RequestBody { .json(record) }
    }

    /// `GET /dataset`.
    public struct Dataset: Endpoint {
        /// What the server holds.
        public typealias Response = DatasetInfo
        /// `{\"error\": …}`.
        public typealias ErrorBody = Problem
        /// The call.
        public init() {}
        /// `/dataset`.
        public var path: String { "/dataset" }
    }
}
