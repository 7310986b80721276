import Foundation

/// A point on the Earth, in degrees.
///
/// ```swift
/// let gardermoen = Coordinate(latitude: 60.1939, longitude: 11.1004)
/// let nearest = try await airports.fetch(
///     orderBy: [.nearest(to: gardermoen, latitude: \.latitude, longitude: \.longitude)], limit: 5)
/// ```
public struct Coordinate: Sendable, Hashable {
    /// Degrees north of the equator (negative: south), from -90 to 90.
    public var latitude: Double
    /// Degrees east of the Greenwich meridian (negative: west), from -180 to 180.
    public var longitude: Double

    /// A point at `latitude` and `longitude`, in degrees. Values are not checked or normalized.
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }
}

/// Great-circle distance, the one formula every store uses to order by distance.
public enum GeoDistance {
    /// Mean Earth radius in kilometres (IUGG).
    public static let earthRadiusKilometers = 6371.0088

    /// The haversine distance in kilometres between two points given in degrees.
    ///
    /// SQL stores evaluate exactly these operations in this order, so ties and ordering agree
    /// with the in-memory store bit for bit.
    public static func haversineKilometers(
        latitude1: Double, longitude1: Double, latitude2: Double, longitude2: Double
    ) -> Double {
        let radians = Double.pi / 180.0
        let dLat = (latitude2 - latitude1) * radians
        let dLon = (longitude2 - longitude1) * radians
        let sinLat = sin(dLat / 2.0)
        let sinLon = sin(dLon / 2.0)
        let a = sinLat * sinLat + cos(latitude1 * radians) * cos(latitude2 * radians) * sinLon * sinLon
        return 2.0 * earthRadiusKilometers * asin(sqrt(min(1.0, a)))
    }

    /// The haversine distance in kilometres between two coordinates.
    public static func haversineKilometers(_ from: Coordinate, _ to: Coordinate) -> Double {
        haversineKilometers(
            latitude1: from.latitude, longitude1: from.longitude,
            latitude2: to.latitude, longitude2: to.longitude)
    }
}
