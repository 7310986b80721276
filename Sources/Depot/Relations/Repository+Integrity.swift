extension Repository {
    /// `Root`'s relations, checked.
    func checkedRelations() throws -> [RelationDescriptor] {
        if let error = RelationDescriptor.validationError(of: Root.self) { throw error }
        return Root.relations.map(\.descriptor)
    }

    /// Writes `batch`, after checking the foreign keys it carries; returns how many rows it wrote.
    @discardableResult
    func write(_ batch: RowBatch, mode: WriteMode, _ writer: any StoreWriter) async throws -> Int {
        let table = try checkedSchema().table
        let keys = try checkedRelations().filter { $0.kind == .toOne }.map(\.foreignKey)
        if !keys.isEmpty, !ReferenceChecks.areSkipped { try await Integrity.checkReferences(batch, keys: keys, writer) }
        return try await writer.write(batch, into: table, mode: mode)
    }

    /// Removes the rows matching `predicate` (all when `nil`), applying delete rules.
    func delete(where predicate: PredicateNode?, _ writer: any StoreWriter) async throws -> Int {
        let table = try checkedSchema().table
        _ = try checkedRelations()
        return try await Integrity.delete(from: table, entity: EntityType(Root.self), where: predicate, writer)
    }
}
