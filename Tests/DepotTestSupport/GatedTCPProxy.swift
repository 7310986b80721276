import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A TCP proxy on 127.0.0.1 in front of another local port, closed until ``open()``: connections
/// made before wait in its backlog (their start-up bytes unanswered), then each is forwarded both
/// ways. For tests that must hold a client's connection back while something else happens — a
/// store's commit listener kept from its `LISTEN` while another store commits.
///
/// ```swift
/// let gate = try GatedTCPProxy(to: 5432)
/// defer { gate.close() }
/// configuration.listenerURL = "postgres://depot:depot@127.0.0.1:\(gate.port)/depot"
/// // … the listener cannot connect yet …
/// gate.open()
/// ```
public final class GatedTCPProxy: Sendable {
    /// The port it listens on.
    public let port: Int
    private let target: Int
    private let listener: Int32
    private let gate = DispatchSemaphore(value: 0)
    private let state = Mutex((opened: false, closed: false, sockets: [Int32]()))

    /// Listens on an ephemeral port of 127.0.0.1, forwarding to `target` on 127.0.0.1 once opened.
    ///
    /// - Parameter target: The port connections are forwarded to.
    /// - Throws: `POSIXError` when the socket cannot be made.
    public init(to target: Int) throws {
        self.target = target
        (listener, port) = try Loopback.listeningSocket()
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// Starts forwarding: connections waiting in the backlog, and every later one.
    public func open() {
        let first = state.withLock { state in
            defer { state.opened = true }
            return !state.opened
        }
        if first { gate.signal() }
    }

    /// Stops listening and ends every forwarded connection.
    public func close() {
        let sockets = state.withLock { state -> [Int32] in
            guard !state.closed else { return [] }
            state.closed = true
            return state.sockets
        }
        shutdown(listener, Int32(SHUT_RDWR))
        for socket in sockets { shutdown(socket, Int32(SHUT_RDWR)) }
        gate.signal()
    }

    deinit { closeSocket(listener) }

    /// Remembers `socket` to end at ``close()``; `false` (and the socket closed) when closed already.
    private func keep(_ socket: Int32) -> Bool {
        let kept = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.sockets.append(socket)
            return true
        }
        if !kept { closeSocket(socket) }
        return kept
    }

    /// The two pumps of a connection: the second to end closes its sockets.
    private final class Pumps: Sendable {
        private let running = Mutex(2)
        func lastEnded() -> Bool {
            running.withLock { running in
                running -= 1
                return running == 0
            }
        }
    }

    /// Closes `socket`, which no pump uses any more.
    private func forget(_ socket: Int32) {
        state.withLock { $0.sockets.removeAll { $0 == socket } }
        closeSocket(socket)
    }

    private func acceptLoop() {
        gate.wait()
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }  // closed
            guard keep(client) else { return }
            guard let upstream = Loopback.connectedSocket(to: target) else {
                forget(client)
                continue
            }
            guard keep(upstream) else {
                forget(client)
                return
            }
            let pumps = Pumps()
            let ended: @Sendable () -> Void = { [self] in
                guard pumps.lastEnded() else { return }
                forget(client)
                forget(upstream)
            }
            Thread.detachNewThread {
                Self.pump(from: client, to: upstream)
                ended()
            }
            Thread.detachNewThread {
                Self.pump(from: upstream, to: client)
                ended()
            }
        }
    }

    /// Copies bytes from one socket to the other until either ends, then ends both.
    private static func pump(from source: Int32, to destination: Int32) {
        var buffer = [UInt8](repeating: 0, count: 16_384)
        loop: while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            var sent = 0
            while sent < count {
                let written = buffer[sent..<count].withUnsafeBytes {
                    send(destination, $0.baseAddress, $0.count, noSignal)
                }
                if written <= 0 { break loop }
                sent += written
            }
        }
        shutdown(source, Int32(SHUT_RDWR))
        shutdown(destination, Int32(SHUT_RDWR))
    }
}
