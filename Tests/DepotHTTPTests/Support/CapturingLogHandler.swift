import Logging
import Synchronization

/// A swift-log handler that keeps every line, with its metadata, for assertions.
struct CapturingLogHandler: LogHandler {
    struct Line: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: Logger.Metadata

        /// The message and every metadata value, as one string to search.
        var fullText: String {
            ([message] + metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }).joined(separator: " ")
        }
    }

    final class Store: Sendable {
        private let state = Mutex<[Line]>([])
        func append(_ line: Line) { state.withLock { $0.append(line) } }
        var lines: [Line] { state.withLock { $0 } }
    }

    let store: Store
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        store.append(
            Line(
                level: event.level, message: "\(event.message)",
                metadata: metadata.merging(event.metadata ?? [:]) { $1 }))
    }

    /// A logger capturing into a new store.
    static func logger() -> (Logger, Store) {
        let store = Store()
        return (Logger(label: "capture") { _ in CapturingLogHandler(store: store) }, store)
    }
}
