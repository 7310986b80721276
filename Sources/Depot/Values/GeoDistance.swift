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

    /// The same point with its longitude brought within -180…180 (`remainder(longitude, 360)`,
    /// exact and in constant time, however far out the longitude is): what distance filters and
    /// orders measure from, so `181` and `-179` are one place on every store.
    public var normalized: Coordinate {
        guard longitude.isFinite, !(-180...180).contains(longitude) else { return self }
        return Coordinate(latitude: latitude, longitude: remainder(longitude, 360))
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

/// A latitude/longitude box that holds every point within a distance of a center: what SQL
/// stores put before the exact distance so an index on the latitude column can serve a
/// ``PredicateNode/withinDistance(latitudeColumn:longitudeColumn:center:kilometers:)``.
public struct BoundingBox: Sendable, Hashable {
    /// The latitude range, in degrees (a margin wider than exact).
    public var latitude: ClosedRange<Double>
    /// The longitude ranges, in degrees within -180…180: none when every longitude is in (the
    /// circle holds a pole, or is wider than a hemisphere), two when the circle crosses the
    /// antimeridian.
    public var longitudes: [ClosedRange<Double>]

    /// The box around every point within `kilometers` of `center` (a spherical cap): the
    /// latitude band of the cap's angular radius and, unless the cap holds a pole, the longitude
    /// span `asin(sin(d) / cos(latitude))` on either side, wrapped at ±180; `nil` when no point
    /// can be within (a negative distance). Both are widened by 0.001° so that rounding never
    /// leaves out a point the exact distance keeps.
    public init?(around center: Coordinate, kilometers: Double) {
        guard kilometers >= 0, center.latitude.isFinite, center.longitude.isFinite else { return nil }
        let margin = 0.001
        guard (-90...90).contains(center.latitude) else {
            // Haversine still measures from such a center; no box is drawn around it.
            latitude = -90...90
            longitudes = []
            return
        }
        let angle = kilometers / GeoDistance.earthRadiusKilometers  // radians
        let degrees = angle * 180 / .pi
        latitude = (center.latitude - degrees - margin)...(center.latitude + degrees + margin)
        let radians = center.latitude * .pi / 180
        guard angle < .pi / 2, latitude.upperBound < 90, latitude.lowerBound > -90, sin(angle) < cos(radians)
        else {
            longitudes = []
            return
        }
        let span = asin(sin(angle) / cos(radians)) * 180 / .pi + margin
        guard span < 180 else {
            longitudes = []
            return
        }
        // Centers outside -180…180 are brought back first, in constant time.
        let longitude = center.normalized.longitude
        let west = longitude - span
        let east = longitude + span
        if west < -180 {
            longitudes = [-180...east, (west + 360)...180]
        } else if east > 180 {
            longitudes = [west...180, -180...(east - 360)]
        } else {
            longitudes = [west...east]
        }
    }
}
