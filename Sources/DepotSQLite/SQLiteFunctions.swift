import Depot
import Foundation
import GRDB

/// The functions and collation Depot's SQLite statements use, registered on every connection,
/// so SQLite computes exactly what the in-memory store computes.
enum SQLiteFunctions {
    /// `depot_fold(text)`: ``TextFolding/fold(_:)``, for case-insensitive matching.
    static let fold = DatabaseFunction("depot_fold", argumentCount: 1, pure: true) { values in
        String.fromDatabaseValue(values[0]).map(TextFolding.fold)
    }

    /// `depot_distance(lat0, lon0, lat, lon)`: haversine kilometres, NULL without coordinates.
    static let distance = DatabaseFunction("depot_distance", argumentCount: 4, pure: true) { values in
        guard let latitude1 = Double.fromDatabaseValue(values[0]),
            let longitude1 = Double.fromDatabaseValue(values[1]),
            let latitude2 = Double.fromDatabaseValue(values[2]),
            let longitude2 = Double.fromDatabaseValue(values[3])
        else { return nil }
        return GeoDistance.haversineKilometers(
            latitude1: latitude1, longitude1: longitude1, latitude2: latitude2, longitude2: longitude2)
    }

    /// `COLLATE depot_decimal`: orders exact decimals stored as text by value.
    static let decimal = DatabaseCollation("depot_decimal") { left, right in
        let posix = Locale(identifier: "en_US_POSIX")
        guard let a = Decimal(string: left, locale: posix), let b = Decimal(string: right, locale: posix) else {
            return left < right ? .orderedAscending : (left == right ? .orderedSame : .orderedDescending)
        }
        return a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
    }

    static func register(in db: Database) {
        db.add(function: fold)
        db.add(function: distance)
        db.add(collation: decimal)
    }
}
