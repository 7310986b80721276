import Foundation

/// Reads the airports CSV (RFC 4180: quoted fields, `""` escapes; empty means "none").
public enum AirportsCSV {
    /// The CSV shipped with the example.
    public static var bundledURL: URL? {
        Bundle.module.url(forResource: "airports", withExtension: "csv")
    }

    /// The expected header.
    public static let header = [
        "icao", "iata", "name", "city", "subd", "country", "elevation", "lat", "lon", "tz", "lid",
    ]

    /// A line that cannot be read: file, line number and what was wrong.
    public struct Problem: Error, CustomStringConvertible, Equatable {
        /// The file's name (or its path, when it could not be read).
        public var file: String
        /// The 1-based line number; 0 when the file could not be read at all.
        public var line: Int
        /// What was wrong.
        public var reason: String
        /// `file:line: reason`.
        public var description: String { "\(file):\(line): \(reason)" }
    }

    /// Parses the whole file; the first bad line throws, so nothing is imported from a bad file.
    ///
    /// A UTF-8 byte-order mark at the start (spreadsheet exports write one) is skipped.
    public static func parse(_ text: String, file: String, progress: ((Int, Int) -> Void)? = nil) throws -> [Airport] {
        let text = text.hasPrefix("\u{FEFF}") ? String(text.dropFirst()) : text
        let lines = try records(text, file: file)
        guard let first = lines.first else { throw Problem(file: file, line: 1, reason: "the file is empty") }
        guard first.fields == header else {
            throw Problem(
                file: file, line: 1,
                reason:
                    "expected the header \(header.joined(separator: ",")), found \(first.fields.joined(separator: ","))"
            )
        }
        var airports: [Airport] = []
        airports.reserveCapacity(lines.count)
        var seen: Set<String> = []
        for (index, record) in lines.dropFirst().enumerated() {
            let airport = try airport(from: record.fields, file: file, line: record.line)
            guard seen.insert(airport.icao).inserted else {
                throw Problem(file: file, line: record.line, reason: "icao '\(airport.icao)' appears twice")
            }
            airports.append(airport)
            if index % 2000 == 0 { progress?(index, lines.count - 1) }
        }
        progress?(lines.count - 1, lines.count - 1)
        return airports
    }

    /// ``parse(_:file:progress:)`` on a thread of its own, not on Swift's cooperative pool: parsing
    /// 28,298 rows holds a thread for a while (seconds in a debug build), and the pool has only as
    /// many threads as cores, so every other task of the process (a server's requests, an app's UI
    /// work) would wait behind it.
    public static func parseOffThePool(
        _ text: String, file: String, progress: (@Sendable (Int, Int) -> Void)? = nil
    ) async throws -> [Airport] {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Result { try parse(text, file: file, progress: progress) })
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    static func airport(from fields: [String], file: String, line: Int) throws -> Airport {
        guard fields.count == header.count else {
            throw Problem(file: file, line: line, reason: "expected \(header.count) fields, found \(fields.count)")
        }
        func number(_ index: Int) throws -> Double {
            guard let value = Double(fields[index]), value.isFinite else {
                throw Problem(
                    file: file, line: line, reason: "\(header[index]) '\(fields[index])' is not a number")
            }
            return value
        }
        func optional(_ index: Int) -> String? { fields[index].isEmpty ? nil : fields[index] }
        guard !fields[0].isEmpty else { throw Problem(file: file, line: line, reason: "icao is empty") }
        guard !fields[2].allSatisfy(\.isWhitespace) else {
            throw Problem(file: file, line: line, reason: "name is empty")
        }
        guard !fields[5].isEmpty else { throw Problem(file: file, line: line, reason: "country is empty") }
        let latitude = try number(7)
        let longitude = try number(8)
        guard (-90...90).contains(latitude), (-180...180).contains(longitude) else {
            throw Problem(file: file, line: line, reason: "lat/lon \(latitude),\(longitude) is out of range")
        }
        return Airport(
            icao: fields[0], iata: optional(1), name: fields[2], city: optional(3), subdivision: optional(4),
            country: fields[5], elevation: try number(6), latitude: latitude, longitude: longitude,
            timeZone: optional(9), localCode: optional(10))
    }

    /// Splits text into records of fields, tracking line numbers; quoted fields may hold commas,
    /// quotes (`""`) and line breaks.
    static func records(_ text: String, file: String) throws -> [(line: Int, fields: [String])] {
        var records: [(line: Int, fields: [String])] = []
        var fields: [String] = []
        var field: [UInt8] = []
        var inQuotes = false
        var line = 1
        var recordLine = 1
        var quotedFieldEnded = false
        let bytes = Array(text.utf8)
        var index = 0
        // Takes what it changes as arguments: a nested function that captured them would keep
        // them in boxes, checked for exclusive access on every byte appended.
        func endField(_ fields: inout [String], _ field: inout [UInt8], _ quotedFieldEnded: inout Bool) {
            fields.append(String(decoding: field, as: UTF8.self))
            field.removeAll(keepingCapacity: true)
            quotedFieldEnded = false
        }
        while index < bytes.count {
            let byte = bytes[index]
            if inQuotes {
                if byte == UInt8(ascii: "\"") {
                    if index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "\"") {
                        field.append(byte)
                        index += 1
                    } else {
                        inQuotes = false
                        quotedFieldEnded = true
                    }
                } else {
                    if byte == UInt8(ascii: "\n") { line += 1 }
                    field.append(byte)
                }
            } else {
                switch byte {
                case UInt8(ascii: "\""):
                    guard field.isEmpty, !quotedFieldEnded else {
                        throw Problem(file: file, line: line, reason: "a quote inside an unquoted field")
                    }
                    inQuotes = true
                case UInt8(ascii: ","):
                    endField(&fields, &field, &quotedFieldEnded)
                case UInt8(ascii: "\n"):
                    endField(&fields, &field, &quotedFieldEnded)
                    records.append((recordLine, fields))
                    fields = []
                    line += 1
                    recordLine = line
                case UInt8(ascii: "\r"):
                    break
                default:
                    guard !quotedFieldEnded else {
                        throw Problem(file: file, line: line, reason: "text after a closing quote")
                    }
                    field.append(byte)
                }
            }
            index += 1
        }
        if inQuotes { throw Problem(file: file, line: recordLine, reason: "a quoted field is not closed") }
        if !field.isEmpty || !fields.isEmpty || quotedFieldEnded {
            endField(&fields, &field, &quotedFieldEnded)
            records.append((recordLine, fields))
        }
        return records
    }
}
