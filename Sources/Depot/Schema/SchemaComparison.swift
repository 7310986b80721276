/// One definition of "a stored table differs from what an entity declares", for every store:
/// the SQL stores compare what the engine reports, the in-memory store its own descriptions.
package enum SchemaComparison {
    /// A column as a store holds it.
    package struct StoredColumn: Sendable {
        package var name: String
        /// The declared type, as the store spells it.
        package var type: String
        package var isNullable: Bool
        package var hasDefault: Bool

        package init(name: String, type: String, isNullable: Bool, hasDefault: Bool) {
            self.name = name
            self.type = type
            self.isNullable = isNullable
            self.hasDefault = hasDefault
        }
    }

    /// Every difference (column, expected, found) between `stored` and `expected`, and between
    /// the stored key and `table`'s. Stored columns the table does not declare are fine when
    /// nullable or defaulted (rows written without them stay valid).
    ///
    /// - Parameter typeName: how the store spells a Depot type in `stored`.
    package static func differences(
        _ table: TableDescription, expected: [TableDescription.ColumnDescription], stored: [StoredColumn],
        primaryKey: [String], typeName: (ColumnType) -> String
    ) -> [String] {
        var differences: [String] = []
        var byName: [String: StoredColumn] = [:]
        for column in stored { byName[column.name] = column }
        for column in expected {
            let expectedType = typeName(column.type)
            guard let found = byName.removeValue(forKey: column.name) else {
                differences.append("column \(column.name): expected \(expectedType), found no column")
                continue
            }
            if found.type.uppercased() != expectedType.uppercased() {
                differences.append("column \(column.name): expected type \(expectedType), found \(found.type)")
            }
            if found.isNullable != column.isNullable {
                differences.append(
                    "column \(column.name): expected \(column.isNullable ? "NULL allowed" : "NOT NULL"), "
                        + "found \(found.isNullable ? "NULL allowed" : "NOT NULL")")
            }
        }
        for extra in byName.values.sorted(by: { $0.name < $1.name }) where !extra.isNullable && !extra.hasDefault {
            differences.append("column \(extra.name): not declared, and NOT NULL without a default")
        }
        if primaryKey != table.primaryKey {
            differences.append(
                "primary key: expected (\(table.primaryKey.joined(separator: ", "))), "
                    + "found (\(primaryKey.joined(separator: ", ")))")
        }
        return differences
    }

    /// Every declared index of `table` that `stored` lacks or holds differently (other columns,
    /// other uniqueness). Stored indexes the table does not declare are not differences:
    /// migrations may add their own.
    package static func indexDifferences(_ table: TableDescription, stored: [IndexDescription]) -> [String] {
        table.indexes.compactMap { index in
            let description = "\(index.isUnique ? "unique " : "")(\(index.columns.joined(separator: ", ")))"
            guard let found = stored.first(where: { $0.name == index.name }) else {
                return "index \(index.name): expected \(description), found no index"
            }
            guard found.columns == index.columns, found.isUnique == index.isUnique else {
                return "index \(index.name): expected \(description), found "
                    + "\(found.isUnique ? "unique " : "")(\(found.columns.joined(separator: ", ")))"
            }
            return nil
        }
    }

    /// The `.schemaMismatch` error for `table` with `differences` (nil when there are none).
    package static func mismatch(_ table: TableDescription, _ differences: [String]) -> DepotError? {
        guard !differences.isEmpty else { return nil }
        return DepotError(
            .schemaMismatch,
            "table '\(table.name)' does not match \(table.entityName): " + differences.joined(separator: "; "),
            table: table.name)
    }

    /// Checks every entity's table with `verify` (false: the table does not exist; a
    /// `.schemaMismatch` it throws lists differences) and fails once, listing every problem.
    package static func check(
        _ entities: [any Entity.Type], verify: (TableDescription) async throws -> Bool
    ) async throws {
        func table<Root: Entity>(_ entity: Root.Type) -> TableDescription { Root.schema.table }
        var problems: [String] = []
        for entity in entities {
            let description = table(entity)
            do {
                if try await !verify(description) {
                    problems.append("table '\(description.name)' of \(description.entityName) does not exist")
                }
            } catch let error as DepotError where error.kind == .schemaMismatch {
                problems.append(error.message)
            }
        }
        guard problems.isEmpty else {
            throw DepotError(
                .schemaMismatch,
                "the database does not match the app's entities (\(problems.count) table(s)): "
                    + problems.joined(separator: "; "))
        }
    }
}
