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
    /// - Precondition: `values` fills whole rows: its count is a multiple of `columns.count`
    ///   (and is 0 when there are no columns). Anything else stops the program.
    public init(columns: [String], values: [StoredValue]) {
        precondition(
            columns.isEmpty ? values.isEmpty : values.count % columns.count == 0,
            "RowBatch: \(values.count) values do not fill rows of \(columns.count) columns")
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
