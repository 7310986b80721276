import DepotTesting

extension TestAirport {
    /// `count` airports cycling through ``TestAirport/sample``, keyed `X0`, `X1`, …: rows for a
    /// table already holding many when a migration step runs.
    public static func numbered(_ count: Int) -> [TestAirport] {
        (0..<count).map { index in
            var row = sample[index % sample.count]
            row.icao = "X\(index)"
            return row
        }
    }
}
