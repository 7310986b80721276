import DepotHTTP
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension TransportTests {
    /// Requests per transport (about 20 s each in a debug build here). URLSession on Linux leaks
    /// about 150–220 bytes per request (libcurl handles in swift-corelibs-foundation): about 10 MB
    /// over this soak, inside the bound, and printed with the result rather than hidden.
    static let soakCount = 50_000

    @Test(
        "50,000 requests through the client: every one succeeds and memory stays flat",
        .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/statm"), "RSS is read from /proc (Linux)"),
        arguments: transports)
    func soak(kind: TransportKind) async throws {
        let client = try await kind.client()
        let total = Self.soakCount
        let warmUp = total / 10
        let workers = 16

        func run(_ count: Int) async throws -> Int {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for worker in 0..<workers {
                    group.addTask {
                        var succeeded = 0
                        for index in stride(from: worker, to: count, by: workers) {
                            let user = try await client.send(AnyEndpoint<User>(.get, "/user/\(index % 1000)"))
                            if user.id == index % 1000 { succeeded += 1 }
                        }
                        return succeeded
                    }
                }
                return try await group.reduce(0, +)
            }
        }

        let start = ContinuousClock.now
        #expect(try await run(warmUp) == warmUp)
        // The other suites run in this process meanwhile, so RSS also grows with their work. A
        // leak grows it in every window; their work only in some: the smallest growth of four
        // windows is the soak's own.
        let windows = 4
        let perWindow = (total - warmUp) / windows
        var readings = [try residentBytes()]
        for _ in 0..<windows {
            #expect(try await run(perWindow) == perWindow)
            readings.append(try residentBytes())
        }
        let elapsed = ContinuousClock.now - start
        let growths = zip(readings.dropFirst(), readings).map { $0 - $1 }
        let smallest = growths.min() ?? 0
        print(
            "\(kind.testDescription) soak: \(warmUp + perWindow * windows) requests in \(elapsed), RSS "
                + readings.map { "\($0 >> 20)" }.joined(separator: " → ") + " MiB (smallest window: "
                + "\(smallest / perWindow) bytes per request)")
        #expect(
            smallest < 6 << 20,
            "RSS grew in every window of \(perWindow) requests, at least \(smallest >> 10) KiB: \(growths)")
    }

    /// The process's resident set size, from /proc/self/statm (Linux).
    private func residentBytes() throws -> Int {
        let text = try String(contentsOfFile: "/proc/self/statm", encoding: .utf8)
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { throw SoakError.unreadableStatm(text) }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    private enum SoakError: Error { case unreadableStatm(String) }
}
