import DepotHTTP
import Testing

@Suite("Header fields")
struct HeaderFieldsTests {
    @Test("Lookup ignores case; setting replaces every value in place; repeated fields keep their order")
    func semantics() {
        var headers: HeaderFields = ["Accept": "a", "Set-Cookie": "1", "X": "x"]
        headers.add("set-cookie", "2")
        #expect(headers["ACCEPT"] == "a")
        #expect(headers.values(for: "Set-Cookie") == ["1", "2"])
        headers["SET-COOKIE"] = "3"
        #expect(headers.fields.map(\.name) == ["Accept", "Set-Cookie", "X"])
        #expect(headers.values(for: "set-cookie") == ["3"])
        headers["accept"] = nil
        #expect(!headers.contains("Accept") && headers.count == 2)
        headers.merge(["x": "y", "New": "n"])
        #expect(headers["X"] == "y" && headers["new"] == "n" && headers.count == 3)
        let upper: HeaderFields = ["A": "1"]
        #expect(upper == ["a": "1"])
        #expect(upper != ["a": "2"])
    }

    @Test("Names that differ only outside ASCII letters are different names")
    func asciiOnlyFolding() {
        let headers: HeaderFields = ["X-A": "1"]
        #expect(headers["x-a"] == "1")
        #expect(headers["X_A"] == nil)
        #expect(headers["X-A "] == nil)
    }
}
