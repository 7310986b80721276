import Depot

/// A database's tables as the engine reports them, normalized so that SQLite and PostgreSQL
/// compare equal when they hold the same schema: Depot type names instead of engine ones,
/// PostgreSQL's folded copies left out, tables and indexes sorted by name.
package struct IntrospectedSchema: Sendable, Hashable, CustomStringConvertible {
    package struct Column: Sendable, Hashable {
        package var name: String
        /// The Depot type (`url` reads as `text`: PostgreSQL stores both as text).
        package var type: String
        package var isNullable: Bool
    }

    package struct Index: Sendable, Hashable {
        package var name: String
        package var columns: [String]
        package var isUnique: Bool
    }

    package struct Table: Sendable, Hashable {
        package var name: String
        package var columns: [Column]
        package var primaryKey: [String]
        package var indexes: [Index]
    }

    package var tables: [Table]

    package var description: String {
        tables.map { table in
            let columns = table.columns.map { "\($0.name) \($0.type)\($0.isNullable ? "" : " not null")" }
            let indexes = table.indexes.map {
                "\($0.isUnique ? "unique " : "")\($0.name)(\($0.columns.joined(separator: ", ")))"
            }
            return "\(table.name)(\(columns.joined(separator: ", ")); key \(table.primaryKey); \(indexes))"
        }.joined(separator: "\n")
    }
}

extension SQLStore {
    /// The normalized schema of the store's database (its ledger included).
    package func introspect() async throws -> IntrospectedSchema {
        try await withWriter { session in
            let renderer = session.renderer
            var tables: [IntrospectedSchema.Table] = []
            for name in try await session.texts(renderer.catalogTables).compactMap({ $0.first ?? nil }) {
                var table = IntrospectedSchema.Table(name: name, columns: [], primaryKey: [], indexes: [])
                let columns = try await session.connection.catalogColumns(of: name, renderer)
                for column in columns where !SchemaDrift.isLegacyFoldedCopy(column.name, in: columns) {
                    table.columns.append(
                        .init(
                            name: column.name, type: renderer.dialect.depotTypeName(fromCatalog: column.type),
                            isNullable: !column.isNotNull))
                }
                table.primaryKey = columns.filter { $0.keyPosition > 0 }.sorted { $0.keyPosition < $1.keyPosition }
                    .map(\.name)
                for index in try await session.connection.catalogIndexes(of: name, renderer) {
                    table.indexes.append(.init(name: index.name, columns: index.columns, isUnique: index.isUnique))
                }
                tables.append(table)
            }
            return IntrospectedSchema(tables: tables)
        }
    }
}
