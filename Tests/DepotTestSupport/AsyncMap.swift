extension Array {
    /// The elements mapped one after another by an async `transform`, in order.
    public func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var mapped: [T] = []
        mapped.reserveCapacity(count)
        for element in self { mapped.append(try await transform(element)) }
        return mapped
    }
}
