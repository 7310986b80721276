import Foundation
import Testing

@testable import Depot

/// `KeyPositions` hashes integer keys as integers until another kind arrives. Axes: the key's
/// kind (integer, double equal to an integer, other double, text, null), the order kinds arrive
/// in (integers first, then others; others first), lookup before and after the move. The oracle
/// is a dictionary of `StoredValue`s fed the same operations.
@Suite("Key positions")
struct KeyPositionsTests {
    @Test("finds what a dictionary of StoredValues finds, whatever kinds of keys arrive in whatever order")
    func agreesWithStoredValueDictionary() {
        let pool: [StoredValue] = [
            .integer(0), .integer(1), .integer(-1), .integer(.max), .integer(.min), .double(1), .double(-0.0),
            .double(1.5), .double(9_007_199_254_740_992), .text("1"), .text(""), .null, .bool(true),
            .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F") ?? UUID()),
        ]
        var random = SystemRandomNumberGenerator()
        for round in 0..<500 {
            var positions = KeyPositions(capacity: round % 3)
            var oracle: [StoredValue: Int] = [:]
            // Some rounds stay with integers throughout; the others mix every kind in.
            let keys = round.isMultiple(of: 4) ? Array(pool.prefix(5)) : pool
            for step in 0..<20 {
                let key = keys[Int.random(in: 0..<keys.count, using: &random)]
                if Bool.random(using: &random) {
                    #expect(positions.updateValue(step, forKey: key) == oracle.updateValue(step, forKey: key), "\(key)")
                } else {
                    let inserted = oracle[key] == nil
                    if inserted { oracle[key] = step }
                    #expect(positions.insert(step, forKey: key) == inserted, "\(key)")
                }
                for probe in pool { #expect(positions[probe] == oracle[probe], "round \(round): \(probe)") }
                #expect(positions.count == oracle.count)
            }
        }
    }

    @Test("an integer key finds the double of the same value and no other kind")
    func integerEqualsItsDouble() {
        var positions = KeyPositions()
        positions.updateValue(7, forKey: .integer(3))
        #expect(positions[.double(3)] == 7)
        #expect(positions[.double(3.5)] == nil)
        #expect(positions[.text("3")] == nil)
        // After the move to StoredValue keys, the same.
        positions.updateValue(8, forKey: .text("3"))
        #expect(positions[.double(3)] == 7)
        #expect(positions[.integer(3)] == 7)
        #expect(positions[.text("3")] == 8)
    }
}
