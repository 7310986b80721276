/// Rows to write, as column names and a flat array of values (row after row).
///
/// ```swift
/// let batch = RowBatch(
///     columns: ["icao", "name"],
///     values: [.text("ENGM"), .text("Oslo Gardermoen"), .text("ENBR"), .text("Bergen Flesland")])
/// batch.count   // 2
/// batch.row(1)  // [.text("ENBR"), .text("Bergen Flesland")]
/// ```
public struct RowBatch: Sendable {
    /// The columns each row carries, in order.
    public var columns: [String]
    /// The values, `columns.count` per row.
    public var values: [StoredValue]

    /// A batch of `values.count / columns.count` rows.
    ///
    /// `values` should fill whole rows (a multiple of `columns.count`, none without columns):
    /// a store refuses a batch that does not with `DepotError` of kind `.invalidQuery`, before it
    /// writes anything; ``count`` counts whole rows only.
    public init(columns: [String], values: [StoredValue]) {
        self.columns = columns
        self.values = values
    }

    /// How many rows the batch holds.
    public var count: Int { columns.isEmpty ? 0 : values.count / columns.count }

    /// The values of row `index`.
    public func row(_ index: Int) -> ArraySlice<StoredValue> {
        values[(index * columns.count)..<((index + 1) * columns.count)]
    }
}
