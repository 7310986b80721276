import Logging
import Synchronization

/// A swift-log handler that keeps every line, with its metadata, for assertions.
public struct CapturingLogHandler: LogHandler {
    /// One logged line.
    public struct Line: Sendable {
        /// Its level.
        public var level: Logger.Level
        /// Its message.
        public var message: String
        /// Its metadata, the handler's and the call's.
        public var metadata: Logger.Metadata

        /// The message and every metadata value, as one string to search.
        public var fullText: String {
            ([message] + metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }).joined(separator: " ")
        }
    }

    /// The lines a handler captured.
    public final class Store: Sendable {
        private let state = Mutex<[Line]>([])
        func append(_ line: Line) { state.withLock { $0.append(line) } }
        /// Every line so far, in order.
        public var lines: [Line] { state.withLock { $0 } }
        /// Forgets the lines so far.
        public func clear() { state.withLock { $0.removeAll() } }
    }

    let store: Store
    /// The handler's own metadata.
    public var metadata: Logger.Metadata = [:]
    /// The lowest level the handler takes.
    public var logLevel: Logger.Level

    /// The handler's metadata value for `key`.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Keeps the event as a ``Line``.
    public func log(event: LogEvent) {
        store.append(
            Line(
                level: event.level, message: "\(event.message)",
                metadata: metadata.merging(event.metadata ?? [:]) { $1 }))
    }

    /// A logger at `level` capturing into a new store.
    public static func logger(level: Logger.Level = .trace) -> (Logger, Store) {
        let store = Store()
        return (Logger(label: "capture") { _ in CapturingLogHandler(store: store, logLevel: level) }, store)
    }
}
