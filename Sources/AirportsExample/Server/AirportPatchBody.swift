import Depot
import Foundation

/// Reads and checks a `PATCH /airports/{icao}` body.
enum AirportPatchBody {
    static func decode(_ data: Data, icao: String, maximumTextLength: Int) throws -> AirportRecord {
        let object: [String: Any]
        do {
            guard let parsed = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw APIProblem.badRequest("the body must be a JSON object of airport members")
            }
            object = parsed
        } catch let problem as APIProblem {
            throw problem
        } catch {
            throw APIProblem.badRequest("the body is not valid JSON")
        }
        let unknown = object.keys.filter { !AirportRecord.memberNames.contains($0) }.sorted()
        guard unknown.isEmpty else {
            throw APIProblem.badRequest(
                "unknown member\(unknown.count == 1 ? "" : "s") \(unknown.map { "'\($0)'" }.joined(separator: ", ")); "
                    + "an airport has \(AirportRecord.memberNames.joined(separator: ", "))")
        }
        for name in AirportRecord.requiredMemberNames where object[name] is NSNull {
            throw APIProblem.badRequest("'\(name)' cannot be null")
        }
        if let given = object["icao"] {
            guard let text = given as? String, text == icao else {
                throw APIProblem.badRequest("icao cannot change: the path names '\(icao)', the body '\(given)'")
            }
        }
        var withKey = data
        if object["icao"] == nil {
            // Give the record its key without re-serializing the members (numbers stay exact).
            let key = String(decoding: try JSONEncoder().encode(icao), as: UTF8.self)
            let brace = data.firstIndex(of: UInt8(ascii: "{")) ?? data.startIndex
            let member = #""icao":"# + key + (object.isEmpty ? "" : ",")
            withKey = data.prefix(through: brace) + Data(member.utf8) + data.suffix(from: brace + 1)
        }
        let record: AirportRecord
        do {
            record = try JSONDecoder().decode(AirportRecord.self, from: withKey)
        } catch let DecodingError.typeMismatch(type, context) {
            let member = context.codingPath.first?.stringValue ?? "?"
            throw APIProblem.badRequest("'\(member)' must be \(type == String.self ? "a string" : "a number")")
        } catch {
            throw APIProblem.badRequest("the body is not an airport record: \(error)")
        }
        try check(record, maximumTextLength: maximumTextLength)
        return record
    }

    /// Refuses a record whose members break the API's rules: `null` for a required member, empty
    /// names, texts over the limit, coordinates out of range.
    static func check(_ record: AirportRecord, maximumTextLength: Int) throws {
        for name in AirportRecord.requiredMemberNames where record.member(name) == "null" {
            throw APIProblem.badRequest("'\(name)' cannot be null")
        }
        for (name, field) in [("name", record.$name), ("country", record.$country)] {
            if case .value(let text) = field, text.trimmingCharacters(in: .whitespaces).isEmpty {
                throw APIProblem.badRequest("'\(name)' cannot be empty")
            }
        }
        let texts: [(String, String?)] = [
            ("iata", record.iata), ("name", record.name), ("city", record.city), ("subd", record.subdivision),
            ("country", record.country), ("tz", record.timeZone), ("lid", record.localCode),
        ]
        for case (let name, let text?) in texts {
            try APIProblem.checkText(text, named: "'\(name)'", maximumLength: maximumTextLength)
        }
        if let latitude = record.latitude, !(-90...90).contains(latitude) {
            throw APIProblem.badRequest("'lat' must be within -90…90, got \(latitude)")
        }
        if let longitude = record.longitude, !(-180...180).contains(longitude) {
            throw APIProblem.badRequest("'lon' must be within -180…180, got \(longitude)")
        }
    }
}
extension AirportRecord {
    /// A member's value as JSON-comparable text: `nil` when absent, `"null"` when null.
    func member(_ name: String) -> String? {
        func text<T: Encodable>(_ field: Field<T>) -> String? {
            switch field {
            case .absent: nil
            case .null: "null"
            case .value(let value): (try? JSONEncoder().encode(value)).map { String(decoding: $0, as: UTF8.self) }
            }
        }
        switch name {
        case "icao": return text(.value(icao))
        case "iata": return text($iata)
        case "name": return text($name)
        case "city": return text($city)
        case "subd": return text($subdivision)
        case "country": return text($country)
        case "elevation": return text($elevation)
        case "lat": return text($latitude)
        case "lon": return text($longitude)
        case "tz": return text($timeZone)
        case "lid": return text($localCode)
        default: return nil
        }
    }
}
