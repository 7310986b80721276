// Samples that must run in a process of their own (a file in the current folder, Application
// Support, a process-wide bootstrap, a loop that prints until cancelled) run in a child: this test
// binary started again, running one test of its own, in a fresh temporary folder.
//
// Not Swift Testing's exit tests: once one has run, its monitor thread waits on *any* child of the
// process and reaps the migration probes and kill-loop children, whose waits then never return
// (that hung a CI run). Here the child is spawned and waited for by ``ChildProcess``, like them.
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A test binary run again as a child, to run one sample in a process of its own.
///
/// The parent calls ``run(_:filter:environment:)`` with the sample's name; the child is this same
/// test binary running only the test `filter` names, which is enabled when ``requested`` is set,
/// enters ``enterScratchFolder()``, runs the sample named by ``requested`` with its own
/// expectations, and ends with ``passed()``. The parent expects exit status 0 and that line.
public enum SampleChild {
    /// The environment variable naming the sample a child runs.
    public static let variable = "DEPOT_SAMPLE_CHILD"

    /// In a child: the sample it runs; `nil` in an ordinary test run.
    public static let requested = ProcessInfo.processInfo.environment[variable]

    /// Whether this platform can start its test binary again (Linux: `/proc/self/exe` is the test
    /// binary; on macOS, `xctest` loads the tests as a bundle).
    public static let isSupported: Bool = {
        #if os(Linux)
            return true
        #else
            return false
        #endif
    }()

    /// In a child: makes a fresh temporary folder the current folder, and its subfolder `data`
    /// (not created) `XDG_DATA_HOME`: Foundation's Application Support on Linux.
    ///
    /// - Returns: The folder.
    public static func enterScratchFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-sample-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try #require(FileManager.default.changeCurrentDirectoryPath(folder.path), "cannot enter \(folder.path)")
        setenv("XDG_DATA_HOME", folder.appendingPathComponent("data").path, 1)
        return folder
    }

    /// In a child: says on standard error that the sample it runs (``requested``) ran to its end
    /// (the parent looks for it; a failed expectation makes the child's exit status non-zero).
    public static func passed() {
        FileHandle.standardError.write(Data("\(marker(requested ?? "?"))\n".utf8))
    }

    /// In a child: Application Support as Foundation finds it, which must lie inside `folder`
    /// (``enterScratchFolder()``'s).
    ///
    /// - Parameter folder: The child's scratch folder.
    /// - Returns: The folder Foundation names, not created.
    public static func applicationSupport(in folder: URL) throws -> URL {
        let support = try FileManager.default.url(
            for: .applicationSupportDirectory, in: .userDomainMask, appropriateFor: nil, create: false)
        try #require(support.path.hasPrefix(folder.path), "Application Support is \(support.path)")
        return support
    }

    static func marker(_ name: String) -> String { "sample \(name) ran to its end" }

    /// In the parent: runs `name` in a child (the test `filter` names, e.g. `ReadmeTests.ProcessSampleChild`)
    /// and expects that it ran to its end and passed. A child that runs past 300 s is killed and fails.
    ///
    /// - Parameters:
    ///   - name: The sample, as the child's test knows it.
    ///   - filter: The child's test (Swift Testing's `--filter`).
    ///   - environment: Added to this process's environment for the child.
    public static func run(
        _ name: String, filter: String, environment: [String: String] = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let binary = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        var childEnvironment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        childEnvironment[variable] = name
        let process = try ChildProcess.run(
            binary, ["--testing-library", "swift-testing", "--filter", filter], environment: childEnvironment,
            errors: .output)
        guard let handle = process.output else { throw POSIXError(.EPIPE) }
        let printed = Mutex(Data())  // read as it comes: a child past its bound still says what it did
        let (status, output): (Int32, String)
        do {
            (status, output) = try await Deadline.run("the sample child \(name)", limit: .seconds(300)) {
                try await offPool {
                    while case let chunk = handle.availableData, !chunk.isEmpty {
                        printed.withLock { $0.append(chunk) }
                    }
                    process.waitUntilExit()
                    return (process.terminationStatus, String(decoding: printed.withLock { $0 }, as: UTF8.self))
                }
            }
        } catch {
            process.killUnlessReaped()
            let said = String(decoding: printed.withLock { $0 }, as: UTF8.self)
            Issue.record("the child running \(name) was killed; it said:\n\(said)", sourceLocation: sourceLocation)
            throw error
        }
        #expect(
            status == 0 && output.contains(marker(name)), "the child running \(name) said:\n\(output)",
            sourceLocation: sourceLocation)
    }
}
