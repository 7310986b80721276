import BenchHarness
import Depot
import DepotHTTP
import DepotSync
import Foundation

// The bench's own copy of the airports example's sync types (AirportsExample is not a product):
// the entity with the example's columns, the wire record with `@Field` members, its patch
// mapper, the feed endpoint and the SyncFeed / SyncPush adapters.

/// The example's `Airport`: the `airports` table, keyed by `icao`, the CSV's column names.
@Entity("airports")
struct SyncAirport: Equatable {
    @PrimaryKey var icao: String
    var iata: String?
    var name: String
    var city: String?
    @Column("subd") var subdivision: String?
    var country: String
    var elevation: Double
    @Column("lat") var latitude: Double
    @Column("lon") var longitude: Double
    @Column("tz") var timeZone: String?
    @Column("lid") var localCode: String?
}

/// An airport on the wire (the example's `AirportRecord`): every member but `icao` a `Field`, so
/// a partial record (a change) carries only what changed.
struct AirportRecord: Codable, Sendable, Equatable {
    var icao: String
    @Field var iata: String?
    @Field var name: String?
    @Field var city: String?
    @Field var subdivision: String?
    @Field var country: String?
    @Field var elevation: Double?
    @Field var latitude: Double?
    @Field var longitude: Double?
    @Field var timeZone: String?
    @Field var localCode: String?

    enum CodingKeys: String, CodingKey {
        case icao, iata, name, city, country, elevation
        case subdivision = "subd"
        case latitude = "lat"
        case longitude = "lon"
        case timeZone = "tz"
        case localCode = "lid"
    }

    /// A record carrying nothing but its key.
    init(icao: String) { self.icao = icao }

    /// The whole airport: every member present (`null` for a missing optional value).
    init(_ airport: SyncAirport) {
        icao = airport.icao
        iata = airport.iata
        name = airport.name
        city = airport.city
        subdivision = airport.subdivision
        country = airport.country
        elevation = airport.elevation
        latitude = airport.latitude
        longitude = airport.longitude
        timeZone = airport.timeZone
        localCode = airport.localCode
    }
}

/// Each present member sets its column, each absent one leaves it alone.
struct AirportRecordMapper: PatchMapper {
    func patch(from record: AirportRecord) -> Patch<SyncAirport> {
        Patch(key: record.icao).set(\.iata, record.$iata).set(\.name, record.$name).set(\.city, record.$city)
            .set(\.subdivision, record.$subdivision).set(\.country, record.$country)
            .set(\.elevation, record.$elevation).set(\.latitude, record.$latitude)
            .set(\.longitude, record.$longitude).set(\.timeZone, record.$timeZone)
            .set(\.localCode, record.$localCode)
    }
}

/// One page of `GET /feed`, the example's `FeedResponse`.
struct FeedResponse: Codable, Sendable {
    var airports: [AirportRecord]
    var deleted: [String]
    var cursor: String
    var more: Bool
    var expired: Bool
}

/// `GET /feed?limit=N&cursor=C`.
struct FeedRequest: Endpoint {
    typealias Response = FeedResponse
    var cursor: String?
    var limit: Int
    var path: String { "/feed" }
    var query: [URLQueryItem] {
        [URLQueryItem(name: "limit", value: String(limit))]
            + (cursor.map { [URLQueryItem(name: "cursor", value: $0)] } ?? [])
    }
}

/// The feed as DepotSync reads it (the example's `AirportsFeed`).
struct AirportsFeed: SyncFeed {
    var pageSize: Int

    func request(after cursor: String?) -> FeedRequest { FeedRequest(cursor: cursor, limit: pageSize) }

    func page(from response: FeedResponse) throws -> FeedPage<SyncAirport> {
        if response.expired { return .expired }
        let mapper = AirportRecordMapper()
        return FeedPage(
            changes: response.airports.map(mapper.patch(from:)), deletedKeys: response.deleted,
            cursor: response.cursor, hasMore: response.more)
    }
}

/// `POST /airports/{icao}/changes` with the changed members (the bench never pushes: the engine
/// needs a push, and the loopback server answers every one as applied).
struct PushRequest: Endpoint {
    typealias Response = PushResult<SyncAirport>
    var changes: AirportRecord
    var idempotencyKey: String
    var method: HTTPMethod { .post }
    var path: String { "/airports/\(changes.icao)/changes" }
    var headers: HeaderFields { ["Idempotency-Key": idempotencyKey] }
    var body: RequestBody { .json(changes) }
    var isIdempotent: Bool { true }
    var responseDecoder: ResponseDecoder<PushResult<SyncAirport>> { ResponseDecoder { _, _ in .applied } }
}

/// Local airport edits as pushes (the example's `AirportsPush`, without the base values).
struct AirportsPush: SyncPush {
    func request(for change: OutgoingChange<SyncAirport>) throws -> PushRequest {
        var changes = AirportRecord(icao: try change.key(as: String.self))
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
        return PushRequest(changes: changes, idempotencyKey: change.idempotencyKey)
    }
}

extension SyncEngine {
    /// An engine syncing the bench's airports over `client`, `pageSize` airports per feed page.
    static func airports(store: any Store, client: APIClient, pageSize: Int) -> SyncEngine {
        SyncEngine(
            store: store, client: client,
            entities: [.entity(SyncAirport.self, feed: AirportsFeed(pageSize: pageSize), push: AirportsPush())])
    }
}

// MARK: - Data

/// The bundled CSV's 28,298 airports, every column (RFC 4180: quoted fields, `""` for a quote
/// inside one; an empty optional field is `nil`), as depot-bench reads it.
func loadAirports() throws -> [SyncAirport] {
    var airports: [SyncAirport] = []
    for fields in try BenchHarness.bundledAirportFields() {
        func optional(_ index: Int) -> String? { fields[index].isEmpty ? nil : fields[index] }
        airports.append(
            SyncAirport(
                icao: fields[0], iata: optional(1), name: fields[2], city: optional(3), subdivision: optional(4),
                country: fields[5], elevation: Double(fields[6]) ?? 0, latitude: Double(fields[7]) ?? 0,
                longitude: Double(fields[8]) ?? 0, timeZone: optional(9), localCode: optional(10)))
    }
    return airports
}
