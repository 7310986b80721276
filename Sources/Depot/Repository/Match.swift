import Synchronization

/// How an ``UpdateMapper`` finds the stored row a source updates: pairs of key paths, from the
/// source to the entity, naming the entity's primary key or one of its unique constraints.
///
/// ```swift
/// // the API's `identifier` is the stored user's `remoteID` (unique; the key is a local UUID)
/// var match: Match<UserResponse, UserEntity> { Match(\.identifier, \.remoteID) }
/// // a composite match: (country, code) is unique together
/// var match: Match<RunwayDTO, Runway> { Match(\.airport, \.airport, \.name, \.name) }
/// ```
///
/// The columns must be the entity's primary key or exactly the columns of a unique constraint
/// (``Schema/unique(_:name:)``, `@Unique`), in any order; otherwise every persist through the
/// mapper throws `.invalidQuery`, naming them.
public struct Match<Source, Target: Entity>: Sendable {
    let targetKeyPaths: [KeyPathBox]
    let sourceValues: @Sendable (Source) -> [StoredValue]

    /// Matches `source` of a source value to the `target` column of stored entities.
    public init<Value: StorableValue>(_ source: KeyPath<Source, Value>, _ target: KeyPath<Target, Value>) {
        let box = TypedKeyPathBox(keyPath: source)
        targetKeyPaths = [KeyPathBox(target)]
        sourceValues = { [$0[keyPath: box.keyPath].storedValue] }
    }

    /// Matches two source values to two columns that are unique together.
    public init<First: StorableValue, Second: StorableValue>(
        _ firstSource: KeyPath<Source, First>, _ firstTarget: KeyPath<Target, First>,
        _ secondSource: KeyPath<Source, Second>, _ secondTarget: KeyPath<Target, Second>
    ) {
        let first = TypedKeyPathBox(keyPath: firstSource)
        let second = TypedKeyPathBox(keyPath: secondSource)
        targetKeyPaths = [KeyPathBox(firstTarget), KeyPathBox(secondTarget)]
        sourceValues = { [$0[keyPath: first.keyPath].storedValue, $0[keyPath: second.keyPath].storedValue] }
    }

    /// The indices of the matched columns in `schema`, checked to be its key or a unique constraint.
    func columns(in schema: Schema<Target>, mapper: Any.Type) throws -> [Int] {
        var indices: [Int] = []
        for keyPath in targetKeyPaths {
            guard let index = schema.columnIndex(keyPath.keyPath) else { throw schema.notAColumn(keyPath.keyPath) }
            indices.append(index)
        }
        let names = Set(indices.map { schema.columns[$0].name })
        let unique =
            Set(schema.primaryKeyIndices.map { schema.columns[$0].name }) == names
            || schema.table.indexes.contains { $0.isUnique && Set($0.columns) == names }
        guard unique, names.count == indices.count else {
            throw DepotError(
                .invalidQuery,
                "\(mapper) matches \(Target.self) by (\(indices.map { schema.columns[$0].name }.joined(separator: ", "))), "
                    + "which is neither its primary key nor a unique constraint",
                table: schema.tableName)
        }
        return indices
    }
}
