import Depot
import Foundation
import Testing

/// Points around the places circles go wrong: the antimeridian, both poles, the equator, and a
/// few with coordinates out of range (which never match).
private let geoPoints: [TestAirport] = {
    var points: [TestAirport] = []
    var index = 0
    func add(_ latitude: Double, _ longitude: Double) {
        points.append(
            TestAirport(
                icao: "G\(String(index, radix: 36))", name: "point \(index)", country: "ZZ", latitude: latitude,
                longitude: longitude))
        index += 1
    }
    for latitude in stride(from: -90.0, through: 90.0, by: 7.5) {
        for longitude in stride(from: -180.0, through: 180.0, by: 15.0) { add(latitude, longitude) }
    }
    for longitude in [179.0, 179.5, 179.9, 179.99, 180.0, -180.0, -179.99, -179.9, -179.5, -179.0] {
        for latitude in [-0.3, 0.0, 0.2, 60.1, 60.2] { add(latitude, longitude) }
    }
    for latitude in [89.0, 89.5, 89.9, 89.99, 90.0, -89.0, -89.5, -89.99, -90.0] {
        for longitude in [-170.0, -90.0, 0.0, 45.0, 135.0, 180.0] { add(latitude, longitude) }
    }
    for (latitude, longitude) in [(95.0, 0.0), (-91.0, 10.0), (10.0, 181.0), (0.0, -200.0)] { add(latitude, longitude) }
    return points
}()

/// Whether a point is one `within` may return: coordinates in range.
private func isValid(_ point: TestAirport) -> Bool {
    (-90...90).contains(point.latitude) && (-180...180).contains(point.longitude)
}

extension StoreConformance {
    static let geoCases: [ConformanceCase] = [
        ConformanceCase("within a distance matches the haversine circle, across the antimeridian and at the poles") {
            (store: any Store) async throws in
            let points = store.repository(TestAirport.self)
            try await points.insert(geoPoints)
            let centers = [
                Coordinate(latitude: 0, longitude: 179.95), Coordinate(latitude: 60.15, longitude: -179.8),
                Coordinate(latitude: 89.95, longitude: 10), Coordinate(latitude: -89.9, longitude: -100),
                Coordinate(latitude: 45, longitude: 0), Coordinate(latitude: 0, longitude: -180),
                Coordinate(latitude: 30, longitude: 190),
            ]
            for center in centers {
                for kilometers in [0.5, 30, 120, 900, 5_000, 20_100] {
                    let expected = geoPoints.filter {
                        isValid($0)
                            && GeoDistance.haversineKilometers(
                                center, Coordinate(latitude: $0.latitude, longitude: $0.longitude)) <= kilometers
                    }
                    let found = try await points.fetch(
                        where: .within(kilometers: kilometers, of: center, latitude: \.latitude, longitude: \.longitude)
                    )
                    #expect(
                        Set(found.map(\.icao)) == Set(expected.map(\.icao)),
                        "within \(kilometers) km of \(center): \(found.count) found, \(expected.count) expected")
                }
            }
            #expect(
                try await points.count(
                    where: .within(kilometers: -1, of: centers[0], latitude: \.latitude, longitude: \.longitude)) == 0)
            let combined = try await points.count(
                where: \.latitude > 0
                    && .within(kilometers: 20_100, of: centers[4], latitude: \.latitude, longitude: \.longitude))
            #expect(combined == geoPoints.filter { isValid($0) && $0.latitude > 0 }.count)
        },
        ConformanceCase("nearest through growing circles answers the first rows of the nearest order") {
            (store: any Store) async throws in
            let points = store.repository(TestAirport.self)
            try await points.insert(geoPoints)
            for center in [
                Coordinate(latitude: 0.1, longitude: -179.97), Coordinate(latitude: 89.97, longitude: -60),
                Coordinate(latitude: 12.3, longitude: 45.6), Coordinate(latitude: -89.999, longitude: 0),
            ] {
                for count in [1, 5, 40] {
                    let ordered = try await points.fetch(
                        where: .within(kilometers: 30_000, of: center, latitude: \.latitude, longitude: \.longitude),
                        orderBy: [.nearest(to: center, latitude: \.latitude, longitude: \.longitude)], limit: count)
                    let nearest = try await points.nearest(
                        count, to: center, latitude: \.latitude, longitude: \.longitude)
                    #expect(nearest.map(\.icao) == ordered.map(\.icao), "\(count) nearest to \(center)")
                }
            }
            let filtered = try await points.nearest(
                3, to: Coordinate(latitude: 0, longitude: 0), latitude: \.latitude, longitude: \.longitude,
                where: \.latitude < -80)
            #expect(filtered.count == 3 && filtered.allSatisfy { $0.latitude < -80 })
            #expect(
                try await points.nearest(
                    0, to: Coordinate(latitude: 0, longitude: 0), latitude: \.latitude, longitude: \.longitude
                ).isEmpty)
            let everything = try await points.nearest(
                10_000, to: Coordinate(latitude: 0, longitude: 0), latitude: \.latitude, longitude: \.longitude)
            #expect(everything.count == geoPoints.filter(isValid).count, "rows out of range are never returned")
        },
        ConformanceCase("a center with a longitude far outside ±180 is the same place, answered at once") {
            (store: any Store) async throws in
            let points = store.repository(TestAirport.self)
            try await points.insert(geoPoints)
            // 11 + 360 × 10⁹ is exact in a Double: the same place as 11. The others only have to
            // answer (they once looped for minutes in the bounding box) with what their remainder says.
            for longitude in [11 + 360 * 1e9, 1e12, -1e15, 1e300, -Double.greatestFiniteMagnitude] {
                let center = Coordinate(latitude: 60, longitude: longitude)
                let same = Coordinate(latitude: 60, longitude: remainder(longitude, 360))
                #expect((-180...180).contains(center.normalized.longitude))
                let found = try await points.fetch(
                    where: .within(kilometers: 2_000, of: center, latitude: \.latitude, longitude: \.longitude))
                let expected = try await points.fetch(
                    where: .within(kilometers: 2_000, of: same, latitude: \.latitude, longitude: \.longitude))
                #expect(found == expected, "within 2,000 km of longitude \(longitude)")
                let nearest = try await points.nearest(3, to: center, latitude: \.latitude, longitude: \.longitude)
                let nearestSame = try await points.nearest(3, to: same, latitude: \.latitude, longitude: \.longitude)
                #expect(nearest == nearestSame, "nearest to longitude \(longitude)")
            }
        },
    ]
}
