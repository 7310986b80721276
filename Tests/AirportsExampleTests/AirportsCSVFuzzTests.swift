import AirportsExample
import DepotTestSupport
import Foundation
import PropertyBased
import Synchronization
import Testing

/// Text a CSV field may hold: separators, quotes, line breaks, letters that fold oddly.
private let fieldText = Gen<String>.oneOf(
    Gen.element(of: ["a,b", "\"quoted\"", "line\nbreak", "ß", "İı", "Σς", "e\u{301}", "👩‍🚀", " ", "''", "\r\n"])
        .map { $0 ?? "" }.eraseToAnySequence(),
    Gen.unicodeScalar(in: "\u{20}"..."\u{2FF}").map { Character($0) }.string(of: 1...8).eraseToAnySequence()
)

private let airportGenerator = zip(
    zip(fieldText, fieldText.optional(), fieldText, fieldText.optional(), fieldText.optional()),
    zip(
        fieldText, Gen.double(in: -1400...29_000), Gen.double(in: -90...90), Gen.double(in: -180...180),
        fieldText.optional(), fieldText.optional())
).map { first, second in
    Airport(
        icao: first.0, iata: first.1, name: first.2.allSatisfy(\.isWhitespace) ? "name" : first.2, city: first.3,
        subdivision: first.4, country: second.0, elevation: second.1, latitude: second.2, longitude: second.3,
        timeZone: second.4, localCode: second.5)
}

/// RFC 4180 with every field quoted: the writer the round trip checks the reader against.
private func csv(_ airports: [Airport]) -> String {
    func quoted(_ text: String?) -> String { "\"" + (text ?? "").replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
    let lines = airports.map { airport in
        [
            airport.icao, airport.iata, airport.name, airport.city, airport.subdivision, airport.country,
            "\(airport.elevation)", "\(airport.latitude)", "\(airport.longitude)", airport.timeZone, airport.localCode,
        ].map(quoted).joined(separator: ",")
    }
    return ([AirportsCSV.header.joined(separator: ",")] + lines).joined(separator: "\n") + "\n"
}

@Suite("Fuzzed airports CSV")
struct AirportsCSVFuzzTests {
    @Test("any airports written as RFC 4180 CSV read back equal: commas, quotes, line breaks and Unicode in fields")
    func roundTrip() async throws {
        try await HeavyHarness.run {
            await propertyCheck(count: 500, input: airportGenerator.array(of: 1...4)) { airports in
                var unique: [Airport] = []
                for airport in airports where !unique.contains(where: { $0.icao == airport.icao }) {
                    unique.append(airport)
                }
                let text = csv(unique)
                do {
                    let parsed = try AirportsCSV.parse(text, file: "fuzz.csv")
                    #expect(parsed == unique, "\(text)")
                } catch {
                    Issue.record("\(text) failed: \(error)")
                }
            }
        }
    }

    @Test(
        "a CSV file with bytes cut, doubled or replaced gives airports or a problem naming a line of the file, never a trap"
    )
    func damagedFiles() async throws {
        try await HeavyHarness.run {
            let outcomes = Mutex((parsed: 0, problems: 0))
            let damage = zip(Gen.int(in: 0...2), Gen.int(in: 0...10_000), Gen.uint8(in: 0...127))
            await propertyCheck(count: 2000, input: airportGenerator.array(of: 1...3), damage.array(of: 1...3)) {
                airports, damages in
                var bytes = Array(csv(airports).utf8)
                for (kind, at, byte) in damages where !bytes.isEmpty {
                    let index = at % bytes.count
                    switch kind {
                    case 0: bytes.remove(at: index)
                    case 1: bytes.insert(bytes[index], at: index)
                    default: bytes[index] = byte
                    }
                }
                let text = String(decoding: bytes, as: UTF8.self)
                // Lines as the reader numbers them: every LF byte (a CR LF is one Character in Swift).
                let lineCount = text.utf8.filter { $0 == UInt8(ascii: "\n") }.count + 1
                do {
                    _ = try AirportsCSV.parse(text, file: "fuzz.csv")
                    outcomes.withLock { $0.parsed += 1 }
                } catch let problem as AirportsCSV.Problem {
                    outcomes.withLock { $0.problems += 1 }
                    #expect(problem.file == "fuzz.csv")
                    #expect(
                        (1...max(1, lineCount)).contains(problem.line), "\(problem) in a file of \(lineCount) lines")
                    #expect(!problem.reason.isEmpty)
                } catch {
                    Issue.record("\(text): \(error) is not a Problem")
                }
            }
            let (parsed, problems) = outcomes.withLock { ($0.parsed, $0.problems) }
            print("fuzzed CSV files: \(parsed) parsed, \(problems) refused naming the line")
            #expect(parsed + problems == 2000 && problems > 0)
        }
    }
}
