import Depot
import DepotHTTP
import DepotSync
import Foundation

extension AirportsAPI {
    /// `GET /feed?cursor=…`: one page of the change feed (a full copy, then the changes since).
    public struct Feed: Endpoint {
        /// The page.
        public typealias Response = FeedResponse
        /// Where to go on from; `nil` starts a full copy.
        public var cursor: String?
        /// The most airports per page (the server takes 1 to 10,000).
        public var limit: Int
        /// The page after `cursor`.
        public init(cursor: String?, limit: Int = 5_000) {
            self.cursor = cursor
            self.limit = limit
        }
        /// `/feed`.
        public var path: String { "/feed" }
        /// `limit`, and `cursor` when set.
        public var query: [URLQueryItem] {
            [URLQueryItem(name: "limit", value: String(limit))]
                + (cursor.map { [URLQueryItem(name: "cursor", value: $0)] } ?? [])
        }
    }

    /// `POST /airports/{icao}/changes`: pushes one local edit, once however often it is delivered.
    public struct Push: Endpoint {
        /// Applied, or a conflict with the server's airport.
        public typealias Response = PushResult<Airport>
        /// The edit.
        public var change: PushBody
        /// Names the edit: the server applies it once.
        public var idempotencyKey: String
        /// A push of `body` under `idempotencyKey`.
        public init(_ body: PushBody, idempotencyKey: String) {
            self.change = body
            self.idempotencyKey = idempotencyKey
        }
        /// `POST`.
        public var method: HTTPMethod { .post }
        /// `/airports/{icao}/changes`.
        public var path: String { "/airports/\(change.changes.icao)/changes" }
        /// The `Idempotency-Key`.
        public var headers: HeaderFields { ["Idempotency-Key": idempotencyKey] }
        /// The JSON body.
        public var body: RequestBody { .json(change) }
        /// Safe to send again: the idempotency key makes a repeated delivery harmless.
        public var isIdempotent: Bool { true }
        /// 2xx, and 409 (a conflict, decoded); other statuses throw.
        public var acceptedStatuses: Range<Int> { 200..<410 }
        /// `.applied` for 2xx, `.conflict` with the server's airport for 409.
        public var responseDecoder: ResponseDecoder<PushResult<Airport>> {
            let endpoint = "POST \(path)"
            return ResponseDecoder { response, decoder in
                switch response.status {
                case 200..<300:
                    return .applied
                case 409:
                    let answer = try decoder.decode(PushAnswer.self, from: response.body)
                    guard let record = answer.airport else { throw HTTPError(.invalidResponse, endpoint: endpoint) }
                    var times: [String: Date] = [:]
                    for (member, seconds) in answer.fieldTimes {
                        times[AirportsPush.columnName(member)] = Date(timeIntervalSince1970: seconds)
                    }
                    return .conflict(RemoteRow(try record.airport(), fieldTimes: times))
                default:
                    throw StatusPolicy().error(for: response, endpoint: endpoint)
                }
            }
        }
    }
}

/// The airports change feed (`GET /feed`) as DepotSync reads it.
public struct AirportsFeed: SyncFeed {
    /// Airports per page.
    public var pageSize: Int

    /// A feed read `pageSize` airports at a time.
    public init(pageSize: Int = 5_000) { self.pageSize = pageSize }

    /// The page after `cursor`.
    public func request(after cursor: String?) -> AirportsAPI.Feed { AirportsAPI.Feed(cursor: cursor, limit: pageSize) }

    /// The page's records as patches (absent members untouched), its deletions and cursor.
    public func page(from response: FeedResponse) throws -> FeedPage<Airport> {
        if response.expired { return .expired }
        let mapper = AirportRecordMapper()
        return FeedPage(
            changes: response.airports.map(mapper.patch(from:)), deletedKeys: response.deleted,
            cursor: response.cursor, hasMore: response.more)
    }
}

/// Local airport edits pushed to `POST /airports/{icao}/changes`.
public struct AirportsPush: SyncPush {
    /// A push; it holds no state.
    public init() {}

    /// The request carrying `change`: its changed members, their base values, when it was made.
    public func request(for change: OutgoingChange<Airport>) throws -> AirportsAPI.Push {
        let icao = try change.key(as: String.self)
        var changes = AirportRecord(icao: icao)
        changes.$iata = change.value(\.iata)
        changes.$name = change.value(\.name)
        changes.$city = change.value(\.city)
        changes.$subdivision = change.value(\.subdivision)
        changes.$country = change.value(\.country)
        changes.$elevation = change.value(\.elevation)
        changes.$latitude = change.value(\.latitude)
        changes.$longitude = change.value(\.longitude)
        changes.$timeZone = change.value(\.timeZone)
        changes.$localCode = change.value(\.localCode)
        var base: AirportRecord?
        if change.baseValues != nil {
            // Only the base of what the edit changed (everything, for a delete): what the server compares.
            var record = AirportRecord(icao: icao)
            let changed = Set(change.changedColumns)
            let all = change.operation == .delete
            func pick<T>(_ column: String, _ field: Field<T>) -> Field<T> {
                all || changed.contains(column) ? field : .absent
            }
            record.$iata = pick("iata", change.baseValue(\.iata))
            record.$name = pick("name", change.baseValue(\.name))
            record.$city = pick("city", change.baseValue(\.city))
            record.$subdivision = pick("subd", change.baseValue(\.subdivision))
            record.$country = pick("country", change.baseValue(\.country))
            record.$elevation = pick("elevation", change.baseValue(\.elevation))
            record.$latitude = pick("lat", change.baseValue(\.latitude))
            record.$longitude = pick("lon", change.baseValue(\.longitude))
            record.$timeZone = pick("tz", change.baseValue(\.timeZone))
            record.$localCode = pick("lid", change.baseValue(\.localCode))
            base = record
        }
        return AirportsAPI.Push(
            PushBody(
                changes: changes, base: base, editedAt: change.editedAt.timeIntervalSince1970,
                delete: change.operation == .delete),
            idempotencyKey: change.idempotencyKey)
    }

    /// The `Airport` column of a wire member name (the same names, but `icao` is the key).
    static func columnName(_ member: String) -> String { member }
}

extension SyncEngine {
    /// An engine syncing airports between `store` and the airports API `client` talks to.
    ///
    /// ```swift
    /// let engine = SyncEngine.airports(store: store, client: APIClient(baseURL: api))
    /// try await engine.store.repository(Airport.self).update(
    ///     where: \.icao == "ENGM", set: [.set(\.name, to: "Oslo Gardermoen")])
    /// try await engine.sync()
    /// ```
    public static func airports(
        store: any Store, client: APIClient?, conflicts: ConflictPolicy<Airport> = .lastWriterWins,
        pageSize: Int = 5_000, clock: @escaping @Sendable () -> Date = { Date() }
    ) -> SyncEngine {
        SyncEngine(
            store: store, client: client,
            entities: [
                .entity(
                    Airport.self, feed: AirportsFeed(pageSize: pageSize), push: AirportsPush(), conflicts: conflicts)
            ],
            clock: clock)
    }
}
