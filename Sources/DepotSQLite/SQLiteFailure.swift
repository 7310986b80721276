import Foundation

/// An error reported by SQLite while stepping or binding.
struct SQLiteFailure: Error, CustomStringConvertible {
    var code: Int32
    var extendedCode: Int32
    var message: String
    var description: String { "SQLite error \(extendedCode): \(message)" }
}
