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
public enum AirportsAPI {
    /// `GET /airports`: airports in icao order (or nearest first with `near`).
    public struct List: Endpoint {
        public typealias Response = [AirportRecord]
        public var country: String?
        public var search: String?
        public var near: Coordinate?
        public var after: String?
        public var limit: Int

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

        public var path: String { "/airports" }
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
        public typealias Response = AirportRecord
        public var icao: String
        public init(icao: String) { self.icao = icao }
        public var path: String { "/airports/\(icao)" }
    }

    /// `PATCH /airports/{icao}` with the members `record` carries; answers the whole airport.
    public struct Update: Endpoint {
        public typealias Response = AirportRecord
        public var record: AirportRecord
        public init(_ record: AirportRecord) { self.record = record }
        public var method: HTTPMethod { .patch }
        public var path: String { "/airports/\(record.icao)" }
        public var body: RequestBody { .json(record) }
    }

    /// `GET /dataset`.
    public struct Dataset: Endpoint {
        public typealias Response = DatasetInfo
        public init() {}
        public var path: String { "/dataset" }
    }

    /// `GET /changes?since=`: partial records changed after `since`.
    public struct Changes: Endpoint {
        public typealias Response = ChangesPage
        public var since: Int
        public var country: String?
        public var limit: Int
        public init(since: Int, country: String? = nil, limit: Int = 1_000) {
            self.since = since
            self.country = country
            self.limit = limit
        }
        public var path: String { "/changes" }
        public var query: [URLQueryItem] {
            var items = [
                URLQueryItem(name: "since", value: String(since)), URLQueryItem(name: "limit", value: String(limit)),
            ]
            if let country { items.append(URLQueryItem(name: "country", value: country)) }
            return items
        }
    }
}
