import Depot
import Foundation
import Testing

// The matrix of column type × operator × order × store (issue: trust, second round).
// Axes: column type — bool, integer, double, decimal, text, URL, JSON (equality only: JSON values
// have no order every store shares, and `<` on them does not compile), blob, date, UUID, each
// required and optional; operator — `==`, `!=`, `<`, `<=`, `>`, `>=`, `in`, `not in` (empty lists
// too), `== nil`, `!= nil`; order — ascending and descending. The oracle is written here, from each
// type's documented order (numbers by value, text and URLs by UTF-8 bytes, blobs and UUIDs by
// bytes, dates by time, false before true), not from any store's code.

/// Byte order of two byte sequences, as `memcmp` then length.
private func bytesPrecede(_ a: some Sequence<UInt8>, _ b: some Sequence<UInt8>) -> Bool {
    a.lexicographicallyPrecedes(b)
}

private func uuidBytes(_ uuid: UUID) -> [UInt8] { withUnsafeBytes(of: uuid.uuid) { Array($0) } }

/// The matrix rows: the extremes, and copies sharing values (ties broken by key in every order).
private let matrixRows: [AllTypes] = {
    var rows = AllTypes.extremes
    for (offset, source) in AllTypes.extremes.enumerated() {
        var copy = source
        copy.id = 10 + offset
        copy.optionalInt = offset == 0 ? nil : source.optionalInt
        copy.optionalString = offset == 1 ? "Straße" : source.optionalString
        rows.append(copy)
    }
    return rows
}()

/// Every operator on one required column, against each row's value; `precedes` is the oracle's
/// order (`nil`: the type has none the stores share).
private func checkRequired<Value: StorableValue & Equatable>(
    _ name: String, _ keyPath: KeyPath<AllTypes, Value>, _ repository: Repository<AllTypes>,
    precedes: ((Value, Value) -> Bool)?
) async throws {
    func ids(_ filter: Filter<AllTypes>) async throws -> Set<Int> {
        Set(try await repository.fetch(where: filter).map(\.id))
    }
    func expected(_ test: (Value) -> Bool) -> Set<Int> {
        Set(matrixRows.filter { test($0[keyPath: keyPath]) }.map(\.id))
    }
    let all = Set(matrixRows.map(\.id))
    for row in matrixRows {
        let value = row[keyPath: keyPath]
        #expect(try await ids(keyPath == value) == expected { $0 == value }, "\(name) == row \(row.id)")
        #expect(try await ids(keyPath != value) == expected { $0 != value }, "\(name) != row \(row.id)")
        #expect(try await ids(Filter.in(keyPath, [value])) == expected { $0 == value }, "\(name) in [row \(row.id)]")
        #expect(
            try await ids(!Filter.in(keyPath, [value])) == expected { $0 != value }, "\(name) not in [row \(row.id)]")
        if let precedes {
            #expect(try await ids(keyPath < value) == expected { precedes($0, value) }, "\(name) < row \(row.id)")
            #expect(
                try await ids(keyPath <= value) == expected { !precedes(value, $0) }, "\(name) <= row \(row.id)")
            #expect(try await ids(keyPath > value) == expected { precedes(value, $0) }, "\(name) > row \(row.id)")
            #expect(
                try await ids(keyPath >= value) == expected { !precedes($0, value) }, "\(name) >= row \(row.id)")
        }
    }
    #expect(try await ids(Filter.in(keyPath, [Value]())) == [], "\(name) in []")
    #expect(try await ids(!Filter.in(keyPath, [Value]())) == all, "\(name) not in []")
    if let precedes {
        // Ties are broken by the key, ascending, in both directions.
        let ascending = matrixRows.sorted {
            let (a, b) = ($0[keyPath: keyPath], $1[keyPath: keyPath])
            return precedes(a, b) || (!precedes(b, a) && $0.id < $1.id)
        }.map(\.id)
        let descending = matrixRows.sorted {
            let (a, b) = ($0[keyPath: keyPath], $1[keyPath: keyPath])
            return precedes(b, a) || (!precedes(a, b) && $0.id < $1.id)
        }.map(\.id)
        #expect(try await repository.fetch(orderBy: [.ascending(keyPath)]).map(\.id) == ascending, "\(name) asc")
        #expect(try await repository.fetch(orderBy: [.descending(keyPath)]).map(\.id) == descending, "\(name) desc")
    }
}

/// Every operator on one optional column: NULL matches only `== nil`; NULLs sort first
/// ascending, last descending.
private func checkOptional<Value: StorableValue & Equatable>(
    _ name: String, _ keyPath: KeyPath<AllTypes, Value?>, _ repository: Repository<AllTypes>,
    precedes: ((Value, Value) -> Bool)?
) async throws {
    func ids(_ filter: Filter<AllTypes>) async throws -> Set<Int> {
        Set(try await repository.fetch(where: filter).map(\.id))
    }
    func expected(_ test: (Value) -> Bool) -> Set<Int> {
        Set(matrixRows.filter { $0[keyPath: keyPath].map(test) ?? false }.map(\.id))
    }
    let all = Set(matrixRows.map(\.id))
    let nulls = Set(matrixRows.filter { $0[keyPath: keyPath] == nil }.map(\.id))
    #expect(try await ids(keyPath == nil) == nulls, "\(name) == nil")
    #expect(try await ids(keyPath != nil) == all.subtracting(nulls), "\(name) != nil")
    for row in matrixRows {
        guard let value = row[keyPath: keyPath] else { continue }
        #expect(try await ids(keyPath == value) == expected { $0 == value }, "\(name) == row \(row.id)")
        #expect(try await ids(keyPath != value) == expected { $0 != value }, "\(name) != row \(row.id)")
        #expect(try await ids(Filter.in(keyPath, [value])) == expected { $0 == value }, "\(name) in [row \(row.id)]")
        #expect(
            try await ids(!Filter.in(keyPath, [value])) == expected { $0 != value }, "\(name) not in [row \(row.id)]")
        if let precedes {
            #expect(try await ids(keyPath < value) == expected { precedes($0, value) }, "\(name) < row \(row.id)")
            #expect(try await ids(keyPath >= value) == expected { !precedes($0, value) }, "\(name) >= row \(row.id)")
        }
    }
    #expect(try await ids(Filter.in(keyPath, [Value]())) == [], "\(name) in []")
    #expect(try await ids(!Filter.in(keyPath, [Value]())) == all, "\(name) not in []: NOT (x IN ()) is true, NULL too")
    if let precedes {
        func before(_ a: AllTypes, _ b: AllTypes, descending: Bool) -> Bool {
            switch (a[keyPath: keyPath], b[keyPath: keyPath]) {
            case (nil, nil): return a.id < b.id
            case (nil, _): return !descending
            case (_, nil): return descending
            case (let x?, let y?):
                let (first, second) = descending ? (y, x) : (x, y)
                return precedes(first, second) || (!precedes(second, first) && a.id < b.id)
            }
        }
        let ascending = matrixRows.sorted { before($0, $1, descending: false) }.map(\.id)
        let descending = matrixRows.sorted { before($0, $1, descending: true) }.map(\.id)
        #expect(try await repository.fetch(orderBy: [.ascending(keyPath)]).map(\.id) == ascending, "\(name) asc")
        #expect(try await repository.fetch(orderBy: [.descending(keyPath)]).map(\.id) == descending, "\(name) desc")
    }
}

extension StoreConformance {
    static let typeMatrixCases: [ConformanceCase] = [
        ConformanceCase("every column type × every operator and order answers as an independent oracle") {
            (store: any Store) async throws in
            let rows = store.repository(AllTypes.self)
            try await rows.insert(matrixRows)
            try await checkRequired("bool", \.bool, rows) { !$0 && $1 }
            try await checkRequired("int64", \.int64, rows, precedes: <)
            try await checkRequired("int8", \.int8, rows, precedes: <)
            try await checkRequired("uint32", \.uint32, rows, precedes: <)
            try await checkRequired("double", \.double, rows, precedes: <)
            try await checkRequired("decimal", \.decimal, rows, precedes: <)
            try await checkRequired("string", \.string, rows) { bytesPrecede($0.utf8, $1.utf8) }
            try await checkRequired("url", \.url, rows) { bytesPrecede($0.absoluteString.utf8, $1.absoluteString.utf8) }
            try await checkRequired("data", \.data, rows) { bytesPrecede($0, $1) }
            try await checkRequired("date", \.date, rows, precedes: <)
            try await checkRequired("uuid", \.uuid, rows) { bytesPrecede(uuidBytes($0), uuidBytes($1)) }
            try await checkRequired("runway (JSON)", \.runway, rows, precedes: nil)
            try await checkOptional("optional int", \.optionalInt, rows, precedes: <)
            try await checkOptional("optional string", \.optionalString, rows) { bytesPrecede($0.utf8, $1.utf8) }
            try await checkOptional("optional date", \.optionalDate, rows, precedes: <)
            try await checkOptional("optional decimal", \.optionalDecimal, rows, precedes: <)
            try await checkOptional("optional data", \.optionalData, rows) { bytesPrecede($0, $1) }
            try await checkOptional("optional uuid", \.optionalUUID, rows) {
                bytesPrecede(uuidBytes($0), uuidBytes($1))
            }
            try await checkOptional("optional runway (JSON)", \.optionalRunway, rows, precedes: nil)
        }
    ]
}
