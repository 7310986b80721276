import Depot
import Foundation

/// A query string read as a form (`+` is a space, `%XX` escapes), refusing unknown and repeated
/// parameters by name.
///
/// Not Hummingbird's `request.uri.queryParameters` (2.28): it leaves `+` as `+` (a browser's
/// `q=san+jose` would search for "san+jose"), does not decode names, and keeps a malformed `%`
/// escape as raw text where this API answers 400 naming it.
struct QueryParameters {
    private var values: [String: String] = [:]

    /// The longest value a parameter may have, in Unicode scalars.
    private let maximumTextLength: Int

    init(_ query: String?, allowed: Set<String>, maximumTextLength: Int) throws {
        self.maximumTextLength = maximumTextLength
        for item in (query ?? "").split(separator: "&", omittingEmptySubsequences: true) {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decoded(_ text: Substring) throws -> String {
                let spaced = text.replacingOccurrences(of: "+", with: " ")
                guard let value = spaced.removingPercentEncoding else {
                    throw APIProblem.badRequest("'\(text)' in the query is not valid percent-encoding")
                }
                return value
            }
            let name = try decoded(parts[0])
            guard allowed.contains(name) else {
                throw APIProblem.badRequest(
                    "unknown parameter '\(name)'; this endpoint takes \(allowed.sorted().joined(separator: ", "))")
            }
            guard values[name] == nil else { throw APIProblem.badRequest("parameter '\(name)' is given twice") }
            values[name] = parts.count > 1 ? try decoded(parts[1]) : ""
        }
    }

    /// The parameter's value; an empty value is refused.
    func text(_ name: String) throws -> String? {
        guard let value = values[name] else { return nil }
        guard !value.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw APIProblem.badRequest("\(name) is empty")
        }
        try APIProblem.checkText(value, named: name, maximumLength: maximumTextLength)
        return value
    }

    func limit(default fallback: Int) throws -> Int {
        guard let text = try text("limit") else { return fallback }
        guard let value = Int(text), (1...AirportsController.maximumLimit).contains(value) else {
            throw APIProblem.badRequest(
                "limit must be a whole number from 1 to \(AirportsController.maximumLimit), got '\(text)'")
        }
        return value
    }
}

extension Coordinate {
    /// `LAT,LON` in degrees, within range; `nil` otherwise.
    public init?(parsing text: String) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map {
            Double($0.trimmingCharacters(in: .whitespaces))
        }
        guard parts.count == 2, let latitude = parts[0], let longitude = parts[1], (-90...90).contains(latitude),
            (-180...180).contains(longitude)
        else { return nil }
        self.init(latitude: latitude, longitude: longitude)
    }
}
