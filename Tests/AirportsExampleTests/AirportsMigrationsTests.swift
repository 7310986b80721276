import PropertyBased
import Testing

@testable import AirportsExample

/// Pieces of names: letters, every kind of white space `Character.isWhitespace` knows (ASCII,
/// NEL, no-break, ogham, em and ideographic spaces, line separators), CR LF, and a space a
/// combining mark makes into another character.
private let piece = Gen.element(of: [
    "a", "Ø", "é", "e\u{301}", "北", " ", " ", "  ", "\t", "\n", "\r\n", "\u{85}", "\u{A0}", "\u{1680}", "\u{2003}",
    "\u{2028}", "\u{202F}", "\u{205F}", "\u{3000}", " \u{301}", "\u{301}", "\u{600}", "\u{200D}", "–", "’", "\u{1C}",
]).map { $0 ?? "" }

@Suite("Airports migrations")
struct AirportsMigrationsTests {
    @Test("tidy's byte check gives what splitting on white space characters gives, for any text")
    func tidyMatchesItsDefinition() async {
        await propertyCheck(count: 3000, input: piece.array(of: 0...8)) { pieces in
            let text = pieces.joined()
            let defined = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            #expect(AirportsMigrations.tidy(text) == defined, "\(Array(text.unicodeScalars))")
            if AirportsMigrations.isTidy(text) { #expect(text == defined, "\(Array(text.unicodeScalars))") }
        }
    }

    @Test("tidy keeps tidy names as they are and tidies the bundled CSV's untidy ones")
    func tidyExamples() {
        #expect(AirportsMigrations.isTidy("Oslo Gardermoen"))
        #expect(AirportsMigrations.tidy("Brumowski  Air Base") == "Brumowski Air Base")
        #expect(AirportsMigrations.tidy(" Oslo\t") == "Oslo")
        #expect(AirportsMigrations.tidy("São\u{A0}Paulo") == "São Paulo")
        #expect(AirportsMigrations.tidy("") == "")
    }
}
