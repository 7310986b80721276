/// A table as a store holds it, read back for ``MigrationProposal``: columns with the Depot type
/// they read as, the key and the indexes made by `CREATE INDEX`.
public struct StoredTable: Sendable, Hashable {
    /// One stored column.
    public struct Column: Sendable, Hashable {
        /// The column's name.
        public var name: String
        /// The Depot type the store's declared type reads as; `nil` when it reads as none.
        /// (SQL stores keep URLs as text: such a column reads as ``ColumnType/text``.)
        public var type: ColumnType?
        /// The type as the store spells it, for messages.
        public var typeName: String
        /// Whether the column accepts NULL.
        public var isNullable: Bool
        /// Whether the column has a default value.
        public var hasDefault: Bool

        /// A stored column.
        public init(name: String, type: ColumnType?, typeName: String, isNullable: Bool, hasDefault: Bool) {
            self.name = name
            self.type = type
            self.typeName = typeName
            self.isNullable = isNullable
            self.hasDefault = hasDefault
        }
    }

    /// The table's name.
    public var name: String
    /// The columns, in table order.
    public var columns: [Column]
    /// The primary-key columns, in key order.
    public var primaryKey: [String]
    /// The indexes (not the primary key's).
    public var indexes: [IndexDescription]

    /// A stored table.
    public init(name: String, columns: [Column], primaryKey: [String], indexes: [IndexDescription]) {
        self.name = name
        self.columns = columns
        self.primaryKey = primaryKey
        self.indexes = indexes
    }
}

/// The steps that would bring a database's tables to what the entities declare, for a developer
/// to review, paste into the app's ``Migrations`` and ship.
///
/// ```swift
/// let proposal = try await store.proposeMigration(for: [User.self, Airport.self])
/// print(proposal.swiftSource(name: "5 users online"))
/// // Migration("5 users online", [
/// //     .addColumn("is_online", .bool, nullable: true, to: "users"),
/// //     .createIndex("users_country_idx", on: "users", columns: ["country"]),
/// // ])
/// ```
///
/// What it compares: tables the database lacks (created whole, with their indexes), columns added
/// or dropped, a column whose name disappeared while one of the same type and nullability
/// appeared (proposed as a rename, to confirm), type and nullability changes, and declared
/// indexes that are missing or differ. Tables and indexes the entities do not mention are left
/// alone (steps may have made their own, such as search indexes). A changed primary key has no
/// operation: the proposal says so and leaves it to a hand-written step.
public struct MigrationProposal: Sendable {
    /// One proposed operation.
    public struct Step: Sendable {
        /// What to run; `nil` for a difference no operation covers (a changed primary key).
        public var operation: MigrationOperation?
        /// The operation as Swift source (a comment when there is no operation).
        public var swift: String
        /// Why it is proposed, and what to check before shipping it.
        public var note: String?
        /// Whether the step only adds (a table, a nullable column, an index): what
        /// ``SchemaChangePolicy/applyAdditiveChanges`` applies by itself.
        public var isAdditive: Bool
        /// Whether the database fits the entities without it: dropping a column the entity no
        /// longer declares that is nullable or has a default (rows written without it stay
        /// valid). ``SchemaChangePolicy/applyAdditiveChanges`` leaves such steps out.
        public var isOptional: Bool = false

        /// A few words for the step (`add users.is_online`), for automatic steps' names.
        var summary: String {
            guard let action = operation?.action else { return "-" }
            switch action {
            case .createTable(let table): return "create \(table.name)"
            case .addColumn(let table, let column, _): return "add \(table).\(column.name)"
            case .createIndex(let index): return "index \(index.name)"
            default: return operation.map { "\($0)" } ?? "-"
            }
        }
    }

    /// The proposed steps, table by table, in the order the entities were given.
    public var steps: [Step]

    /// Whether the database already matches the entities.
    public var isEmpty: Bool { steps.isEmpty }

    /// Whether every step only adds, so the proposal may be applied without review.
    public var isAdditive: Bool { steps.allSatisfy(\.isAdditive) }

    /// The steps as one ``Migration``, named `name`, ready to run (differences without an
    /// operation are left out: ``isComplete`` tells whether there are any).
    public func migration(named name: String) -> Migration {
        Migration(name, steps.compactMap(\.operation))
    }

    /// Whether every difference has an operation (running ``migration(named:)`` then leaves no drift).
    public var isComplete: Bool { steps.allSatisfy { $0.operation != nil } }

    /// The steps as Swift source of one `Migration`, with notes as comments, to paste into the
    /// app's ``Migrations`` after the last step.
    public func swiftSource(name: String) -> String {
        guard !steps.isEmpty else { return "// The database matches the entities: nothing to migrate." }
        var lines = ["Migration(\(SwiftLiteral.string(name)), ["]
        for step in steps {
            if let note = step.note { lines.append("    // \(note)") }
            lines.append(step.operation == nil ? "    // \(step.swift)" : "    \(step.swift),")
        }
        lines.append("])")
        return lines.joined(separator: "\n")
    }

    /// Compares `tables` (what the store holds; a missing table is absent from the dictionary)
    /// with the schemas of `entities`.
    public static func compare(_ entities: [any Entity.Type], with tables: [String: StoredTable]) -> MigrationProposal {
        func description<Root: Entity>(_ entity: Root.Type) -> TableDescription { Root.schema.table }
        var steps: [Step] = []
        for entity in entities {
            let table = description(entity)
            guard let stored = tables[table.name] else {
                steps.append(
                    Step(
                        operation: MigrationOperation(.createTable(table)),
                        swift: ".createTable(\(table.entityName).self)",
                        note: nil, isAdditive: true))
                continue
            }
            steps += compare(table, with: stored)
        }
        return MigrationProposal(steps: steps)
    }

    private static func compare(_ table: TableDescription, with stored: StoredTable) -> [Step] {
        var steps: [Step] = []
        let storedByName = Dictionary(stored.columns.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let declaredNames = Set(table.columns.map(\.name))
        var added = table.columns.filter { storedByName[$0.name] == nil }
        var dropped = stored.columns.filter { !declaredNames.contains($0.name) }
        // A rename: one name disappeared and one of the same type and nullability appeared.
        var renames: [(from: StoredTable.Column, to: TableDescription.ColumnDescription)] = []
        for column in added {
            let candidates = dropped.filter { sameType($0.type, column.type) && $0.isNullable == column.isNullable }
            let rivals = added.filter { sameType($0.type, column.type) && $0.isNullable == column.isNullable }
            if candidates.count == 1, rivals.count == 1, let from = candidates.first {
                renames.append((from, column))
            }
        }
        for (from, to) in renames {
            added.removeAll { $0.name == to.name }
            dropped.removeAll { $0.name == from.name }
            steps.append(
                Step(
                    operation: .renameColumn(from.name, to: to.name, in: table.name),
                    swift: ".renameColumn(\(SwiftLiteral.string(from.name)), to: \(SwiftLiteral.string(to.name)), "
                        + "in: \(SwiftLiteral.string(table.name)))",
                    note: "confirm: '\(from.name)' disappeared and '\(to.name)' (\(to.type.rawValue)) appeared in "
                        + "\(table.name); if they are not the same column, replace this by a drop and an add",
                    isAdditive: false))
        }
        for column in added {
            let name = SwiftLiteral.string(column.name)
            let tableName = SwiftLiteral.string(table.name)
            if column.isNullable {
                steps.append(
                    Step(
                        operation: .addColumn(column.name, column.type, nullable: true, to: table.name),
                        swift: ".addColumn(\(name), .\(column.type.rawValue), nullable: true, to: \(tableName))",
                        note: nil, isAdditive: true))
            } else {
                let value = SwiftLiteral.placeholder(for: column.type)
                steps.append(
                    Step(
                        operation: .addColumn(column.name, column.type, to: table.name, default: value.value),
                        swift:
                            ".addColumn(\(name), .\(column.type.rawValue), to: \(tableName), default: \(value.swift))",
                        note: "choose the value existing rows of \(table.name) get in NOT NULL column '\(column.name)' "
                            + "(proposed: \(value.swift))",
                        isAdditive: false))
            }
        }
        for column in dropped {
            steps.append(
                Step(
                    operation: .dropColumn(column.name, from: table.name),
                    swift: ".dropColumn(\(SwiftLiteral.string(column.name)), from: \(SwiftLiteral.string(table.name)))",
                    note: "drops the values of \(table.name).\(column.name), which \(table.entityName) no longer "
                        + "declares"
                        + (column.isNullable || column.hasDefault
                            ? " (optional: rows written without it stay valid)" : ""),
                    isAdditive: false, isOptional: column.isNullable || column.hasDefault))
        }
        for column in table.columns {
            guard let found = storedByName[column.name] else { continue }
            if !sameType(found.type, column.type) || found.isNullable != column.isNullable {
                steps.append(
                    Step(
                        operation: .alterColumn(
                            column.name, to: column.type, nullable: column.isNullable, in: table.name),
                        swift: ".alterColumn(\(SwiftLiteral.string(column.name)), to: .\(column.type.rawValue), "
                            + "nullable: \(column.isNullable), in: \(SwiftLiteral.string(table.name)))",
                        note:
                            "\(table.name).\(column.name) is \(found.typeName)\(found.isNullable ? "" : " NOT NULL"), "
                            + "declared \(column.type.rawValue)\(column.isNullable ? "" : " NOT NULL"): every stored "
                            + "value must convert (the step fails naming the first that does not)",
                        isAdditive: false))
            }
        }
        if stored.primaryKey != table.primaryKey {
            steps.append(
                Step(
                    operation: nil,
                    swift: "primary key of \(table.name): stored (\(stored.primaryKey.joined(separator: ", "))), "
                        + "declared (\(table.primaryKey.joined(separator: ", "))): no operation changes a key; "
                        + "create a new table, copy the rows in a .data step, drop the old one",
                    note: nil, isAdditive: false))
        }
        for index in table.indexes {
            let create = Step(
                operation: .createIndex(index.name, on: table.name, columns: index.columns, unique: index.isUnique),
                swift: ".createIndex(\(SwiftLiteral.string(index.name)), on: \(SwiftLiteral.string(table.name)), "
                    + "columns: [\(index.columns.map(SwiftLiteral.string).joined(separator: ", "))]"
                    + "\(index.isUnique ? ", unique: true" : ""))",
                note: index.isUnique ? "fails if stored rows already repeat a value of the unique columns" : nil,
                isAdditive: true)
            guard let found = stored.indexes.first(where: { $0.name == index.name }) else {
                steps.append(create)
                continue
            }
            if found.columns != index.columns || found.isUnique != index.isUnique {
                steps.append(
                    Step(
                        operation: .dropIndex(index.name),
                        swift: ".dropIndex(\(SwiftLiteral.string(index.name)))",
                        note: "index \(index.name) covers other columns or uniqueness than declared: rebuilt",
                        isAdditive: false))
                steps.append(create)
            }
        }
        return steps
    }

    /// Whether a stored type reads as the declared one (SQL stores keep URLs as text).
    private static func sameType(_ stored: ColumnType?, _ declared: ColumnType) -> Bool {
        stored == declared || (stored == .text && declared == .url)
    }
}

/// Swift spellings for generated source.
enum SwiftLiteral {
    static func string(_ text: String) -> String {
        var literal = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": literal += "\\\\"
            case "\"": literal += "\\\""
            case "\n": literal += "\\n"
            default: literal.unicodeScalars.append(scalar)
            }
        }
        return literal + "\""
    }

    /// A zero value of `type` for existing rows of a new NOT NULL column, as value and source.
    static func placeholder(for type: ColumnType) -> (value: StoredValue, swift: String) {
        switch type {
        case .bool: (.bool(false), ".bool(false)")
        case .integer: (.integer(0), ".integer(0)")
        case .double: (.double(0), ".double(0)")
        case .decimal: (.decimal(0), ".decimal(0)")
        case .text, .url: (.text(""), ".text(\"\")")
        case .json: (.text("null"), ".text(\"null\")")
        case .blob: (.blob(.init()), ".blob(Data())")
        case .date: (.date(.init(timeIntervalSince1970: 0)), ".date(Date(timeIntervalSince1970: 0))")
        case .uuid:
            (
                .uuid(.init(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))),
                ".uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))"
            )
        }
    }
}

extension MigratableStore {
    /// The steps that would bring the database's tables to what `entities` declare (see
    /// ``MigrationProposal``).
    ///
    /// ```swift
    /// let proposal = try await store.proposeMigration(for: [User.self])
    /// if !proposal.isEmpty { print(proposal.swiftSource(name: "5 users online")) }
    /// ```
    public func proposeMigration(for entities: [any Entity.Type]) async throws -> MigrationProposal {
        func name<Root: Entity>(_ entity: Root.Type) -> String { Root.schema.tableName }
        var tables: [String: StoredTable] = [:]
        for entity in entities {
            let table = name(entity)
            if let stored = try await storedTable(table) { tables[table] = stored }
        }
        return MigrationProposal.compare(entities, with: tables)
    }
}
