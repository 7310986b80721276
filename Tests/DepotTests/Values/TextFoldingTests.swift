import Depot
import DepotTestSupport
import Foundation
import Testing

@Suite("Text folding by the Unicode case folding table")
struct TextFoldingTests {
    @Test("the table folds a scalar exactly when the standard library says case folding changes it (on NFD)")
    func tableMatchesTheStandardLibrary() async throws {
        let table = Dictionary(
            TextFolding.caseFolding.map { ($0.scalar, $0.folded) }, uniquingKeysWith: { first, _ in first })
        #expect(table.count == TextFolding.caseFolding.count)
        let version = TextFolding.unicodeVersion.split(separator: ".").compactMap { Int($0) }
        let major = try #require(version.first)
        let minor = version.count > 1 ? version[1] : 0
        // A second of work per core in a debug build: off the cooperative pool, so tests running
        // beside it keep their threads.
        let (checked, disagreements) = try await offPool { () -> (Int, [String]) in
            var checked = 0
            var disagreements: [String] = []
            for value in UInt32(0)...0x10FFFF {
                guard let scalar = Unicode.Scalar(value), let age = scalar.properties.age else { continue }
                // Scalars assigned after the table's version: the standard library may know more.
                guard age.major < major || (age.major == major && age.minor <= minor) else { continue }
                checked += 1
                // Changes_When_Casefolded is defined on NFD: toCasefold(NFD(x)) != NFD(x).
                let decomposed = String(scalar).decomposedStringWithCanonicalMapping.unicodeScalars
                let folded = decomposed.flatMap { table[$0].map { Array($0.unicodeScalars) } ?? [$0] }
                if scalar.properties.changesWhenCaseFolded != !folded.elementsEqual(decomposed) {
                    disagreements.append(String(value, radix: 16, uppercase: true))
                }
            }
            return (checked, disagreements)
        }
        #expect(checked > 140_000)
        #expect(disagreements.isEmpty, "U+\(disagreements.prefix(20).joined(separator: ", U+"))")
    }

    @Test(
        "Cyrillic Extended-C folds as Unicode says (Foundation's folding leaves it)",
        arguments: [
            ("\u{1C80}", "\u{432}"), ("\u{1C81}", "\u{434}"), ("\u{1C82}", "\u{43E}"), ("\u{1C83}", "\u{441}"),
            ("\u{1C84}", "\u{442}"), ("\u{1C85}", "\u{442}"), ("\u{1C86}", "\u{44A}"), ("\u{1C87}", "\u{463}"),
            ("\u{1C88}", "\u{A64B}"),
        ])
    func cyrillicExtendedC(scalar: String, folded: String) {
        #expect(TextFolding.fold(scalar).unicodeScalars.elementsEqual(folded.unicodeScalars))
    }

    @Test("the capital Cyrillic В and the rounded small ᲀ (U+1C80) fold to one letter")
    func cyrillicVeMatchesItsVariant() {
        #expect(TextFolding.fold("В") == TextFolding.fold("\u{1C80}"))
    }

    @Test("folding is idempotent and composes: fold(fold(x)) == fold(x) for every scalar and sample")
    func idempotent() {
        var samples = ["İstanbul", "ǅemal", "ΣΊΣΥΦΟΣ", "Sa\u{303}O", "ﬃ", "ŉ", "ᾈ", "A\u{30A}NGSTRÖM"]
        for entry in TextFolding.caseFolding { samples.append(String(entry.scalar) + "\u{301}X") }
        for sample in samples {
            let once = TextFolding.fold(sample)
            #expect(TextFolding.fold(once).utf8.elementsEqual(once.utf8), "\(sample)")
        }
    }

    @Test("full folding maps one scalar to several where Unicode says so (status F)")
    func fullFolding() {
        #expect(TextFolding.fold("ß") == "ss")
        #expect(TextFolding.fold("ẞ") == "ss")
        #expect(TextFolding.fold("ﬁ") == "fi")
        #expect(TextFolding.fold("İ").unicodeScalars.map(\.value) == [0x69, 0x307])
        let several = TextFolding.caseFolding.filter { $0.folded.unicodeScalars.count > 1 }
        #expect(several.count >= 100)
    }
}
