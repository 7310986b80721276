// The README's quick start, verbatim between the markers (ReadmeSampleTests checks it).
import Depot
import Testing

// readme:begin
@Entity("airports")
struct Airport: Equatable {
    @PrimaryKey var icao: String
    var iata: String?
    var name: String
    @Indexed var country: String
    var elevation: Double  // feet
    @Column("lat") var latitude: Double
    @Column("lon") var longitude: Double
}

func quickStart(store: some Store) async throws {
    let airports = store.repository(Airport.self)
    try await airports.upsert([
        Airport(
            icao: "ENGM", iata: "OSL", name: "Oslo Gardermoen", country: "NO",
            elevation: 681, latitude: 60.1939, longitude: 11.1004),
        Airport(
            icao: "ENBR", iata: "BGO", name: "Bergen Flesland", country: "NO",
            elevation: 170, latitude: 60.2934, longitude: 5.21814),
        Airport(
            icao: "ENZZ", iata: nil, name: "Ålesund Test Strip", country: "NO",
            elevation: 12.5, latitude: 62.56, longitude: 6.12),
    ])

    // Typed predicates run inside the store.
    let high = try await airports.fetch(
        where: \.country == "NO" && \.elevation > 100,
        orderBy: [.descending(\.elevation)], limit: 20)
    let withCode = try await airports.count(where: \.iata != nil)
    let named = try await airports.fetch(where: .contains(\.name, "ålesund", .caseInsensitive))
    let nearest = try await airports.first(
        orderBy: [
            .nearest(to: Coordinate(latitude: 59.91, longitude: 10.75), latitude: \.latitude, longitude: \.longitude)
        ])
    print(high.map(\.icao), withCode, named.map(\.icao), nearest?.icao ?? "-")
    // ["ENGM", "ENBR"] 2 ["ENZZ"] ENGM

    // One transaction across repositories: everything or nothing.
    try await store.write { tx in
        let inTx = tx.repository(Airport.self)
        try await inTx.replace(where: \.country == "NO", with: high)
        try await inTx.remove("ENBR")
    }
}
// readme:end
