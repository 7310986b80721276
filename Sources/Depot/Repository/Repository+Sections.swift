/// Rows that share a key, for a sectioned list: what ``Repository/sections(by:where:orderBy:limit:)``
/// returns.
public struct Section<Key: Hashable & Sendable, Element: Sendable>: Sendable, Identifiable {
    /// The value the rows share.
    public var key: Key
    /// The rows, in the query's order.
    public var items: [Element]
    /// The key: sections of one result have distinct keys.
    public var id: Key { key }

    /// A section of `items` under `key`.
    public init(key: Key, items: [Element]) {
        self.key = key
        self.items = items
    }
}

extension Section: Equatable where Element: Equatable {}

extension Repository {
    /// The matching entities grouped by a column's value into sections, sections in the column's
    /// order (NULL first) and rows in `orderBy` order within each: one query, ordered by the key
    /// first, cut where the key changes.
    ///
    /// ```swift
    /// let byCountry = try await airports.sections(by: \.country, orderBy: [.ascending(\.name, .caseInsensitive)])
    /// // [Section(key: "AD", items: […]), Section(key: "AE", items: […]), …]
    /// ```
    ///
    /// `limit` counts rows, not sections.
    ///
    /// - Throws: ``DepotError``, as ``fetch(where:orderBy:limit:offset:)`` does.
    public func sections<Key: StorableValue & Hashable>(
        by key: KeyPath<Root, Key>, where predicate: Filter<Root>? = nil, orderBy ordering: [Ordering<Root>] = [],
        limit: Int? = nil
    ) async throws -> [Section<Key, Root>] {
        let rows = try await fetch(where: predicate, orderBy: [.ascending(key)] + ordering, limit: limit)
        return Self.sections(rows, by: key)
    }

    /// ``sections(by:where:orderBy:limit:)`` now, then again after every commit that changed the
    /// rows (see ``observe(where:orderBy:limit:timing:)``).
    ///
    /// ```swift
    /// for try await sections in airports.observeSections(by: \.country, where: \.iata != nil) {
    ///     show(sections)
    /// }
    /// ```
    public func observeSections<Key: StorableValue & Hashable>(
        by key: KeyPath<Root, Key>, where predicate: Filter<Root>? = nil, orderBy ordering: [Ordering<Root>] = [],
        limit: Int? = nil, timing: ObservationTiming = .immediate
    ) -> SectionObservation<Key, Root> {
        SectionObservation(
            rows: observe(where: predicate, orderBy: [.ascending(key)] + ordering, limit: limit, timing: timing),
            key: key)
    }

    static func sections<Key: StorableValue & Hashable>(_ rows: [Root], by key: KeyPath<Root, Key>)
        -> [Section<Key, Root>]
    {
        var result: [Section<Key, Root>] = []
        var current: StoredValue?
        for row in rows {
            let value = row[keyPath: key]
            // Keys compare as the store ordered them (byte-wise text), not as Swift's `==` would.
            let stored = value.storedValue
            if let current, current == stored, !result.isEmpty {
                result[result.count - 1].items.append(row)
            } else {
                result.append(Section(key: value, items: [row]))
            }
            current = stored
        }
        return result
    }
}

/// The live sections of a query (see ``Repository/observeSections(by:where:orderBy:limit:timing:)``).
public struct SectionObservation<Key: StorableValue & Hashable, Root: Entity>: AsyncSequence, Sendable {
    /// One complete result, in sections.
    public typealias Element = [Section<Key, Root>]
    let rows: QueryObservation<Root>
    let key: SectionKey<Root, Key>

    init(rows: QueryObservation<Root>, key: KeyPath<Root, Key>) {
        self.rows = rows
        self.key = SectionKey(keyPath: key)
    }

    /// A new observation (see ``QueryObservation/makeAsyncIterator()``).
    public func makeAsyncIterator() -> Iterator { Iterator(base: rows.makeAsyncIterator(), key: key) }

    /// One observation of the sections; it ends when it is released.
    public struct Iterator: AsyncIteratorProtocol {
        var base: QueryObservation<Root>.Iterator
        let key: SectionKey<Root, Key>

        /// The current sections, then new ones after each commit that changed the rows; `nil` when
        /// the task is cancelled or the store's commit stream ends.
        ///
        /// - Throws: What ``QueryObservation/Iterator/next()`` throws.
        public mutating func next() async throws -> [Section<Key, Root>]? {
            guard let rows = try await base.next() else { return nil }
            return Repository<Root>.sections(rows, by: key.keyPath)
        }
    }
}

/// A key path kept by a sendable observation: key paths are immutable values, and this one only
/// reads a property of each row.
struct SectionKey<Root, Key>: @unchecked Sendable {
    let keyPath: KeyPath<Root, Key>
}
