import Depot
import Foundation
import Testing

@Suite("Stored values and text folding")
struct StoredValueTests {
    @Test("equality is byte-wise for text, unlike Swift's String")
    func byteWiseEquality() {
        #expect("é" == "e\u{301}")
        #expect(StoredValue.text("é") != .text("e\u{301}"))
        #expect(Set([StoredValue.text("é"), .text("e\u{301}")]).count == 2)
        #expect(StoredValue.integer(1) == .double(1))
    }

    @Test("composite text keys that concatenate alike hash apart")
    func compositeKeysHashApart() {
        let left: [StoredValue] = [.text("ab"), .text("c")]
        let right: [StoredValue] = [.text("a"), .text("bc")]
        #expect(left != right)
        #expect(left.hashValue != right.hashValue)
    }

    @Test(
        "folding is full Unicode case folding after NFC",
        arguments: [
            ("SÃO PAULO", "são paulo"), ("Straße", "strasse"), ("ÍSAFJÖRÐUR", "ísafjörður"),
            ("Sa\u{303}o", "são"), ("ﬁne", "fine"), ("ΣΊΣΥΦΟΣ", "σίσυφοσ"),
            ("OSLO Gardermoen 100%", "oslo gardermoen 100%"),
            ("already lower", "already lower"), ("", ""),
        ])
    func folding(input: String, folded: String) {
        #expect(TextFolding.fold(input).utf8.elementsEqual(folded.utf8))
    }

    @Test("the ASCII fast path folds exactly like the general path")
    func asciiFastPath() {
        let samples = ["Oslo", "OSLO", "oslo", "Z@[`{", "A-Z a-z 0-9 !~", "\u{7F}DEL", "MiXeD CaSe 123"]
        for sample in samples {
            let general = sample.precomposedStringWithCanonicalMapping.folding(options: [.caseInsensitive], locale: nil)
            #expect(TextFolding.fold(sample) == general)
        }
    }

    @Test("an out-of-range integer does not decode into a narrower type")
    func narrowing() throws {
        #expect(throws: StoredValueMismatch.self) { _ = try Int8(storedValue: .integer(128)) }
        #expect(throws: StoredValueMismatch.self) { _ = try UInt32(storedValue: .integer(-1)) }
        #expect(try Int8(storedValue: .integer(-128)) == .min)
    }

    @Test("haversine distance matches a known value")
    func haversine() {
        let oslo = Coordinate(latitude: 59.9139, longitude: 10.7522)
        let bergen = Coordinate(latitude: 60.3913, longitude: 5.3221)
        let km = GeoDistance.haversineKilometers(oslo, bergen)
        #expect(abs(km - 304.8) < 1)
        #expect(GeoDistance.haversineKilometers(oslo, oslo) == 0)
    }
}
