/// An entity with the related rows an include loaded, read by relation:
/// `country[Country.airports]`, `airport[Airport.country]`. Its own properties read through it
/// directly (`country.name`) or as ``entity``.
@dynamicMemberLookup
public struct Loaded<Root: Entity>: Sendable {
    /// The entity itself.
    public let entity: Root
    var related: [String: any Sendable]

    /// A property of the entity.
    public subscript<Value>(dynamicMember keyPath: KeyPath<Root, Value>) -> Value {
        entity[keyPath: keyPath]
    }

    /// The included rows of a to-many relation.
    ///
    /// ```swift
    /// let norway = try await countries.fetch(where: \.code == "NO", including: [Country.airports])
    /// let airports = try norway[0][Country.airports]
    /// ```
    ///
    /// - Throws: `DepotError` of kind `.invalidQuery` when the fetch did not include `relation`.
    public subscript<Target>(_ relation: ToMany<Root, Target>) -> [Loaded<Target>] {
        get throws(DepotError) { try value(of: relation.descriptor, as: [Loaded<Target>].self) }
    }

    /// The included rows of a many-to-many relation.
    ///
    /// - Throws: `DepotError` of kind `.invalidQuery` when the fetch did not include `relation`.
    public subscript<Target>(_ relation: ManyToMany<Root, Target>) -> [Loaded<Target>] {
        get throws(DepotError) { try value(of: relation.descriptor, as: [Loaded<Target>].self) }
    }

    /// The included row of a to-one relation: `nil` when the key is NULL (or the row is
    /// filtered out by the include).
    ///
    /// - Throws: `DepotError` of kind `.invalidQuery` when the fetch did not include `relation`.
    public subscript<Target>(_ relation: ToOne<Root, Target>) -> Loaded<Target>? {
        get throws(DepotError) { try value(of: relation.descriptor, as: Loaded<Target>?.self) }
    }

    private func value<T>(of relation: RelationDescriptor, as type: T.Type) throws(DepotError) -> T {
        // Looked up first: a missing entry would otherwise cast to `T` when `T` is an optional.
        guard let stored = related[relation.key], let value = stored as? T else {
            throw DepotError(
                .invalidQuery,
                "\(relation.name) was not included in the fetch of \(Root.self): add it to including:",
                table: Root.schema.tableName)
        }
        return value
    }

    /// Wraps `entities` and runs each of `includes` over them (one query per relation level).
    ///
    /// Each row is wrapped once, with what every include found for it: no wrapper is built
    /// empty and copied to be filled.
    static func load(_ entities: [Root], _ includes: [any IncludeSpec<Root>], _ reader: any StoreReader)
        async throws -> [Loaded<Root>]
    {
        var included: [IncludedValues] = []
        included.reserveCapacity(includes.count)
        if !entities.isEmpty {
            var seen: Set<String> = []
            for include in includes {
                let values = try await include.load(for: entities, from: reader)
                guard seen.insert(values.key).inserted else {
                    throw DepotError(
                        .invalidQuery,
                        "the fetch of \(Root.self) includes one relation twice: give each relation one include",
                        table: Root.schema.tableName)
                }
                included.append(values)
            }
        }
        var loaded: [Loaded<Root>] = []
        loaded.reserveCapacity(entities.count)
        // By index: `enumerated()` would build a generic tuple, a runtime metadata lookup per row
        // in this unspecialized code.
        for index in entities.indices {
            var related: [String: any Sendable] = [:]
            if !included.isEmpty {
                related.reserveCapacity(included.count)
                for values in included { related[values.key] = values.values[index] }
            }
            loaded.append(Loaded(entity: entities[index], related: related))
        }
        return loaded
    }
}

extension Loaded: Equatable where Root: Equatable {
    /// Equal entities; included rows are not compared.
    public static func == (lhs: Loaded, rhs: Loaded) -> Bool { lhs.entity == rhs.entity }
}

/// What an include observation compares its results by (it delivers no result identical to the
/// last): the stored values of every entity and of every row included with it, with the shape
/// (relation keys, counts, absent rows) written in between, so different results never match.
protocol StoredFingerprinting {
    /// Appends this value's stored values and shape to `fingerprint`; `false` when part of it
    /// cannot be compared (then the result counts as changed).
    func appendFingerprint(to fingerprint: inout [StoredValue]) -> Bool
}

extension Loaded: StoredFingerprinting {
    func appendFingerprint(to fingerprint: inout [StoredValue]) -> Bool {
        Root.schema.appendValues(of: entity, to: &fingerprint)
        for key in related.keys.sorted() {
            fingerprint.append(.text(key))
            guard let value = related[key] as? any StoredFingerprinting,
                value.appendFingerprint(to: &fingerprint)
            else { return false }
        }
        fingerprint.append(.null)
        return true
    }

    /// The fingerprint of a whole result; `nil` when it cannot be compared.
    static func fingerprint(of result: [Loaded]) -> [StoredValue]? {
        var fingerprint: [StoredValue] = []
        return result.appendFingerprint(to: &fingerprint) ? fingerprint : nil
    }
}

extension Array: StoredFingerprinting where Element: StoredFingerprinting {
    func appendFingerprint(to fingerprint: inout [StoredValue]) -> Bool {
        fingerprint.append(.integer(Int64(count)))
        return allSatisfy { $0.appendFingerprint(to: &fingerprint) }
    }
}

extension Optional: StoredFingerprinting where Wrapped: StoredFingerprinting {
    func appendFingerprint(to fingerprint: inout [StoredValue]) -> Bool {
        guard let wrapped = self else {
            fingerprint.append(.integer(0))
            return true
        }
        fingerprint.append(.integer(1))
        return wrapped.appendFingerprint(to: &fingerprint)
    }
}
