import Testing

@testable import Depot

@Suite("Result diffs")
struct ResultDiffTests {
    func rows(_ items: [(String, Int)]) -> [[StoredValue]] {
        items.map { [.text($0.0), .integer(Int64($0.1))] }
    }

    func change<T>(_ old: [(String, Int)], _ new: [(String, Int)], result: [T]) -> ResultChange<T> {
        ResultDiff.rows(from: rows(old), to: rows(new), keyIndices: [0]).change(result: result)
    }

    @Test("inserted, removed, updated and moved are reported by key")
    func example() {
        let old = [("a", 1), ("b", 1), ("c", 1), ("d", 1)]
        let new = [("d", 1), ("a", 2), ("c", 1), ("e", 1)]
        let change = change(old, new, result: new.map(\.0))
        #expect(change.removed == [1])
        #expect(change.inserted == [3])
        #expect(change.updated == [1])
        #expect(change.moved.count == 1)
        #expect(change.moved.first?.from == 3 && change.moved.first?.to == 0)
        #expect(change.applied(to: old.map(\.0)) == new.map(\.0))
    }

    @Test("a change applied to a result it does not follow gives its own result instead of trapping")
    func appliedToTheWrongResult() {
        let old = [("a", 1), ("b", 1), ("c", 1), ("d", 1)]
        let new = [("d", 1), ("a", 2), ("c", 1), ("e", 1)]
        let change = change(old, new, result: new.map(\.0))
        #expect(change.applied(to: []) == ["d", "a", "c", "e"])
        #expect(change.applied(to: ["a"]) == ["d", "a", "c", "e"])
        #expect(change.applied(to: ["a", "b", "c", "d", "x", "y"]) == ["d", "a", "c", "e"])
        var malformed = change
        malformed.inserted = [9]
        #expect(malformed.applied(to: old.map(\.0)) == ["d", "a", "c", "e"])
    }

    @Test("applying the diff of random results rebuilds the new result")
    func randomProperty() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let oldKeys = Array(
                Set((0..<Int.random(in: 0..<12, using: &generator)).map { _ in Int.random(in: 0..<15) })
            )
            .shuffled()
            let newKeys = Array(
                Set((0..<Int.random(in: 0..<12, using: &generator)).map { _ in Int.random(in: 0..<15) })
            )
            .shuffled()
            let old = oldKeys.map { ("k\($0)", Int.random(in: 0..<2)) }
            let new = newKeys.map { ("k\($0)", Int.random(in: 0..<2)) }
            let change = change(old, new, result: new.map { "\($0.0)=\($0.1)" })
            #expect(change.applied(to: old.map { "\($0.0)=\($0.1)" }) == new.map { "\($0.0)=\($0.1)" })
        }
    }

    @Test("rows kept at both ends are matched in place: one changed row is one update, one insert one insert")
    func inPlace() {
        let old = (0..<1000).map { ("k\($0)", 0) }
        var new = old
        new[500].1 = 1
        let updated = change(old, new, result: new.map(\.0))
        #expect(updated.updated == [500] && updated.inserted.isEmpty && updated.removed.isEmpty)
        #expect(updated.moved.isEmpty)
        new.insert(("x", 0), at: 10)
        new.remove(at: 900)
        let shifted = change(old, new, result: new.map(\.0))
        #expect(shifted.inserted == [10] && shifted.removed == [899] && shifted.updated == [501])
        #expect(shifted.moved.isEmpty)
        #expect(shifted.applied(to: old.map(\.0)) == new.map(\.0))
    }

    @Test("the longest increasing subsequence keeps the most rows in place")
    func lis() {
        #expect(ResultDiff.longestIncreasingSubsequence([3, 0, 1, 2]) == [1, 2, 3])
        #expect(ResultDiff.longestIncreasingSubsequence([]) == [])
    }
}
