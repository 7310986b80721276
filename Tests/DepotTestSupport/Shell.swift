import Foundation

/// Runs `line` with `/bin/sh` on a thread of its own (`system()`: Foundation's `Process` here once
/// left a finished script a zombie and never called back) and returns its exit status and what it
/// printed, standard error included.
///
/// - Parameter line: The command line.
/// - Returns: Its exit status (0 for success) and its output.
/// - Throws: When the temporary file for its output cannot be made.
public func shell(_ line: String) async throws -> (status: Int32, output: String) {
    let output = FileManager.default.temporaryDirectory.appendingPathComponent("depot-\(UUID().uuidString).out")
    defer { try? FileManager.default.removeItem(at: output) }
    let status = try await offPool { system("\(line) > '\(output.path)' 2>&1 < /dev/null") }
    return (status, (try? String(contentsOf: output, encoding: .utf8)) ?? "")
}
