import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Held while a ``ChildProcess`` makes its pipes and spawns.
private let spawnLock = NSLock()

/// A child process started with `posix_spawn`, for tests that run binaries.
///
/// Not Foundation's `Process`: on Linux with Swift 6.3.1 its `run()` crashes now and then (an
/// over-read in `findMaximumOpenFromProcSelfFD`, swift-corelibs-foundation PR #5472), more often
/// the more files the test process has open — it took down a whole CI run. The pipes made here
/// are close-on-exec, so no child inherits another child's pipe (a reader would then wait for the
/// wrong process to exit); the pipes are made and the child spawned under one lock, so no spawn
/// of this type happens between a pipe's creation and its close-on-exec flag.
public final class ChildProcess: @unchecked Sendable {
    /// The child's process id.
    public let processIdentifier: pid_t
    /// The read end of the child's standard output, when it was piped.
    public let output: FileHandle?
    /// The read end of the child's standard error, when it was piped on its own.
    public let errors: FileHandle?
    private let lock = NSLock()
    private var status: Int32?
    private let reapLock = NSLock()
    private var reaped = false

    /// Where a child's standard output or error goes.
    public enum Destination: Sendable {
        /// A pipe this process reads (``output`` / ``errors``).
        case pipe
        /// `/dev/null`.
        case discard
        /// Standard error only: wherever standard output goes.
        case output
        /// This process's own.
        case inherit
    }

    private init(pid: pid_t, output: FileHandle?, errors: FileHandle?) {
        self.processIdentifier = pid
        self.output = output
        self.errors = errors
    }

    /// Starts `executable` with `arguments`, `environment` (this process's when `nil`), standard
    /// input from `/dev/null`.
    public static func run(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil,
        output: Destination = .pipe, errors: Destination = .pipe
    ) throws -> ChildProcess {
        spawnLock.lock()
        defer { spawnLock.unlock() }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var parentEnds: [Int32] = []
        var childEnds: [Int32] = []
        func pipeEnds() throws -> (read: Int32, write: Int32) {
            var ends: [Int32] = [0, 0]
            guard pipe(&ends) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            // Close-on-exec before any other spawn of ours can run (they all hold `spawnLock`).
            _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
            parentEnds.append(ends[0])
            childEnds.append(ends[1])
            return (ends[0], ends[1])
        }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        var outputHandle: FileHandle?
        switch output {
        case .pipe:
            let ends = try pipeEnds()
            posix_spawn_file_actions_adddup2(&actions, ends.write, 1)
            outputHandle = FileHandle(fileDescriptor: ends.read, closeOnDealloc: true)
        case .discard, .output:
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        case .inherit:
            break
        }
        var errorHandle: FileHandle?
        switch errors {
        case .pipe:
            let ends = try pipeEnds()
            posix_spawn_file_actions_adddup2(&actions, ends.write, 2)
            errorHandle = FileHandle(fileDescriptor: ends.read, closeOnDealloc: true)
        case .discard:
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        case .output:
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        case .inherit:
            break
        }
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        let environment = environment ?? ProcessInfo.processInfo.environment
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv + envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable.path, &actions, nil, argv, envp)
        for end in childEnds { close(end) }
        guard result == 0 else {
            for end in parentEnds { close(end) }
            throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EIO)
        }
        return ChildProcess(pid: pid, output: outputHandle, errors: errorHandle)
    }

    /// Sends SIGTERM.
    public func terminate() { kill(processIdentifier, SIGTERM) }

    /// Sends SIGKILL unless the child has been reaped already (its process id may then be
    /// another process's).
    public func killUnlessReaped() {
        reapLock.lock()
        defer { reapLock.unlock() }
        if !reaped { kill(processIdentifier, SIGKILL) }
    }

    /// Blocks until the child has exited (call it off the cooperative pool: ``offPool(_:)``).
    public func waitUntilExit() {
        lock.lock()
        defer { lock.unlock() }
        guard status == nil else { return }
        var raw: Int32 = 0
        // Waits without reaping, so a kill cannot meet a reused process id; then reaps.
        var info = siginfo_t()
        while waitid(P_PID, id_t(processIdentifier), &info, WEXITED | WNOWAIT) == -1 {
            guard errno == EINTR else {
                status = -1
                return
            }
        }
        reapLock.lock()
        while waitpid(processIdentifier, &raw, 0) == -1 && errno == EINTR {}
        reaped = true
        reapLock.unlock()
        status = raw
    }

    /// The exit status, or the number of the signal that ended it (as Foundation's `Process`
    /// reports); call after ``waitUntilExit()``.
    public var terminationStatus: Int32 {
        lock.lock()
        defer { lock.unlock() }
        guard let status else { return -1 }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : signal
    }
}
