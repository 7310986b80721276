import Depot
import Foundation

/// The example's schema, version by version: what `airports migrate` brings a store to.
///
/// | Version | Step |
/// | --- | --- |
/// | 1 | `1 airports`: the `airports` table (a store an import or a sync made already has it: the step adopts it) |
/// | 2 | `2 tidy names`: names and cities lose leading and trailing white space, and runs of it inside become one space (15 of the bundled airports have them, `LOXT`'s "Brumowski  Air Base" among them), read and written 2,000 airports at a time |
/// | 3 | `3 coordinates index`: an index on latitude and longitude, which `nearest` and `within` use |
/// | 4 | `4 search index`: the search indexes of names and cities, which `query --search` (`.matches`) reads |
///
/// ```swift
/// let store = try SQLiteStore(path: "airports.sqlite")
/// let outcome = try await AirportsMigrations.run(on: store) { progress in
///     print(progress.phase, progress.done, progress.total ?? 0)   // "2 tidy names" 2000 28298 …
/// }
/// // outcome.steps == ["1 airports", "2 tidy names", "3 coordinates index", "4 search index"] on an imported store
/// ```
public enum AirportsMigrations {
    /// The steps, oldest first.
    public static let all = Migrations([
        Migration("1 airports", [.createTable(Airport.self)]),
        Migration(
            "2 tidy names",
            [
                .data("trim names and cities and collapse runs of spaces") { tx in
                    let airports = tx.repository(Airport.self)
                    // Every row is read: "white space" (tabs, no-break spaces, …) is more than a
                    // store filter can name; only rows that change are written.
                    for try await batch in airports.batches(of: 2_000) {
                        let tidied = batch.compactMap { airport -> Airport? in
                            var tidy = airport
                            tidy.name = Self.tidy(airport.name)
                            tidy.city = airport.city.map(Self.tidy)
                            return tidy == airport ? nil : tidy
                        }
                        if !tidied.isEmpty { try await airports.upsert(tidied) }
                    }
                }
            ], down: .irreversible),
        Migration(
            "3 coordinates index", [.createIndex("airports_coordinates", on: "airports", columns: ["lat", "lon"])]),
        Migration(
            "4 search index",
            [.createSearchIndex(Airport.self, \.name), .createSearchIndex(Airport.self, \.city)]),
    ])

    /// Brings `store` to `version` (the latest when `nil`), reporting each step that works through
    /// rows as a phase named after the step, counted in airports.
    ///
    /// - Throws: `DepotError` of kind `.migration` naming the step that failed (the store stays at
    ///   the version before it), or a version outside 0…``all``'s latest; going below version 2
    ///   fails, as that step cannot be undone.
    public static func run(
        on store: some MigratableStore, to version: Int? = nil,
        progress: (@Sendable (WorkProgress) -> Void)? = nil
    ) async throws -> MigrationOutcome {
        guard let progress else { return try await store.migrate(all, to: version) }
        return try await store.migrate(all, to: version) { migration in
            guard let rows = migration.rows else { return }
            progress(WorkProgress(phase: migration.step, done: rows.done, total: rows.total, unit: "airports"))
        }
    }

    /// The steps that would bring `store`'s tables to what ``Airport`` declares, as Swift source of
    /// the next `Migration` to paste into ``all`` (or a line saying there is nothing to do).
    /// Nothing is changed.
    public static func proposal(for store: some MigratableStore) async throws -> String {
        let version = try await store.appliedMigrations().count
        let proposal = try await store.proposeMigration(for: [Airport.self])
        return proposal.swiftSource(name: "\(version + 1) …")
    }

    /// `text` without leading and trailing white space, each run of white space inside it one space.
    static func tidy(_ text: String) -> String {
        if isTidy(text) { return text }
        return text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// Whether ``tidy(_:)`` leaves `text` as it is, read from its UTF-8 bytes (checking each
    /// `Character` for white space costs most of the step): no white space but single spaces
    /// (U+0020) between other characters, each followed by an ASCII one (a space followed by a
    /// combining mark is one `Character`, white space all the same). `false` when unsure: then
    /// `tidy` splits it.
    static func isTidy(_ text: String) -> Bool {
        var afterSpace = true  // a leading space is not tidy
        var bytes = text.utf8.makeIterator()
        while let byte = bytes.next() {
            switch byte {
            case 0x20:
                if afterSpace { return false }
                afterSpace = true
            case 0x09...0x0D: return false
            case 0xC2, 0xE1, 0xE2, 0xE3:
                // The lead bytes of U+0085, U+00A0, U+1680, U+2000…U+205F and U+3000: any may be
                // Unicode white space.
                return false
            case 0x80...:
                if afterSpace { return false }
            default: afterSpace = false
            }
        }
        return !afterSpace  // nor a trailing one (an empty text splits to itself)
    }
}
