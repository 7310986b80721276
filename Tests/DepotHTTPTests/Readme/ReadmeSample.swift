// The README's DepotHTTP section, verbatim between the markers (ReadmeTests checks it); ReadmeSampleTests runs it.
import Depot
import DepotHTTP
import Foundation
import Logging

/// The quick start's entity, as in the README.
struct Airport: Entity, Equatable {
    var icao: String
    var iata: String?
    var name: String
    var country: String
    var elevation: Double
    var latitude: Double
    var longitude: Double

    static let schema = Schema<Airport>("airports", primaryKey: \.icao) {
        Column(\.icao, "icao")
        Column(\.iata, "iata")
        Column(\.name, "name")
        Column(\.country, "country")
        Column(\.elevation, "elevation")
        Column(\.latitude, "lat")
        Column(\.longitude, "lon")
    }
}

// readme:begin
// What the API sends: {"data": [{"code": "ENGM", "name": "Oslo Gardermoen", …}]}
struct AirportDTO: Decodable, Sendable {
    var code: String
    var iata: String?
    var name: String
    var country: String
    var elevationFeet: Double
    var lat: Double
    var lon: Double
}

// One call, defined once: the request and what its response becomes.
struct AirportsInCountry: Endpoint {
    typealias Response = [AirportDTO]
    var country: String

    var path: String { "/airports" }
    var query: [URLQueryItem] { [URLQueryItem(name: "country", value: country)] }
    var responseDecoder: ResponseDecoder<[AirportDTO]> { .json(wrappedIn: "data") }
}

// API model → stored entity, upserted by primary key.
struct AirportDTOMapper: PersistMapper {
    func entity(from dto: AirportDTO) -> Airport {
        Airport(
            icao: dto.code, iata: dto.iata, name: dto.name, country: dto.country,
            elevation: dto.elevationFeet, latitude: dto.lat, longitude: dto.lon)
    }
}

func makeClient(baseURL: URL, tokens: TokenProvider, logger: Logger) -> APIClient {
    var configuration = APIClient.Configuration()
    configuration.timeout = .seconds(10)  // the whole call, retries included
    configuration.middleware = [TokenAuthentication(tokens), LoggingMiddleware(logger: logger)]
    // AsyncHTTPClient on Linux, URLSession on Apple platforms; or pass
    // transport: URLSessionTransport() / AsyncHTTPClientTransport() / StubTransport().
    return APIClient(baseURL: baseURL, configuration: configuration)
}

func syncAirports(in country: String, client: APIClient, store: some Store) async throws -> Int {
    do {
        let dtos = try await client.send(AirportsInCountry(country: country))
        try await store.repository(Airport.self).persist(dtos, mapper: AirportDTOMapper())
        return dtos.count
    } catch let error as HTTPError {
        switch error.kind {
        case .notFound:
            return 0  // error.serverMessage: "no airports in XX"
        case .timedOut, .connectionFailed:
            throw error  // offline or slow: try again later
        default:
            throw error  // e.g. "GET /airports: decoding failed … at data[3].lat"
        }
    }
}
// readme:end
