// For samples that must run in a process of their own (Swift Testing exit tests): the child
// runs in a fresh temporary folder, checks what the sample did, and says on standard error whether
// its checks passed; the parent expects that it did.
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A sample's check that failed in the child process: what it says reaches the parent's output.
public struct SampleCheckFailed: Error, CustomStringConvertible {
    /// What failed.
    public let description: String
}

/// Runs `body` in this (child) process with a fresh temporary folder as the current folder and
/// as `XDG_DATA_HOME` (where Foundation finds Application Support on Linux), given to `body`.
/// It exits with status 0 either way, saying on standard error whether its checks passed (what a
/// failed one found, too): the parent reads that through ``report(_:)``.
public func inScratchProcess(_ body: (URL) async throws -> Void) async -> Never {
    do {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-sample-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        guard FileManager.default.changeCurrentDirectoryPath(folder.path) else {
            throw SampleCheckFailed(description: "cannot enter \(folder.path)")
        }
        setenv("XDG_DATA_HOME", folder.path, 1)
        try await body(folder)
        FileHandle.standardError.write(Data("\(passedMarker)\n".utf8))
    } catch {
        FileHandle.standardError.write(Data("sample check failed: \(error)\n".utf8))
    }
    exit(0)
}

/// In a child process: throws ``SampleCheckFailed`` with `message` unless `condition` holds.
public func sampleCheck(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    guard condition else { throw SampleCheckFailed(description: message()) }
}

/// What a child process says on standard error when its checks passed.
public let passedMarker = "sample checks passed"

/// Expects that a child process (see ``inScratchProcess(_:)``) said its checks passed; records
/// what it said otherwise.
public func report(_ result: ExitTest.Result?) {
    guard let result else { return }  // it did not exit with 0: already recorded
    let said = String(decoding: result.standardErrorContent, as: UTF8.self)
    #expect(said.contains(passedMarker), "the child process said: \(said)")
}
