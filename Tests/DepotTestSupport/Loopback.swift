import Foundation

#if canImport(Glibc)
    import Glibc
    let streamSocket: Int32 = Int32(SOCK_STREAM.rawValue)
    let noSignal: Int32 = Int32(MSG_NOSIGNAL)
    func closeSocket(_ socket: Int32) { _ = Glibc.close(socket) }
#elseif canImport(Darwin)
    import Darwin
    let streamSocket: Int32 = SOCK_STREAM
    let noSignal: Int32 = 0
    func closeSocket(_ socket: Int32) { _ = Darwin.close(socket) }
#endif

/// TCP sockets on 127.0.0.1, for tests that start servers and proxies.
public enum Loopback {
    /// A port of 127.0.0.1 nothing listens on now (the system's choice of an ephemeral port), for
    /// a server that must be told its port before it starts — another process may take it first.
    ///
    /// - Returns: The port.
    /// - Throws: `POSIXError` when no socket can be bound.
    public static func unusedPort() throws -> Int {
        let bound = try refusingPort()
        bound.close()
        return bound.port
    }

    /// A port of 127.0.0.1 that refuses every connection while the returned socket is open: bound,
    /// never listening, so no other server can take it meanwhile ("offline" for a client).
    ///
    /// - Returns: The port, and the socket to close when done (``RefusingPort/close()``).
    /// - Throws: `POSIXError` when no socket can be bound.
    public static func refusingPort() throws -> RefusingPort {
        let fd = socket(AF_INET, streamSocket, 0)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var address = address(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            let error = POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            closeSocket(fd)
            throw error
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return RefusingPort(socket: fd, port: Int(UInt16(bigEndian: address.sin_port)))
    }

    /// Whether something accepts a TCP connection on `port` of 127.0.0.1 now.
    ///
    /// - Parameter port: The port.
    /// - Returns: `true` when a connection was made (it is closed again).
    public static func accepts(_ port: Int) -> Bool {
        guard let socket = connectedSocket(to: port) else { return false }
        closeSocket(socket)
        return true
    }

    /// A listening socket on an ephemeral port of 127.0.0.1, and the port.
    static func listeningSocket(backlog: Int32 = 64) throws -> (socket: Int32, port: Int) {
        let bound = try refusingPort()
        guard listen(bound.socket, backlog) == 0 else {
            let error = POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            bound.close()
            throw error
        }
        return (bound.socket, bound.port)
    }

    /// A socket connected to `port` of 127.0.0.1; `nil` when the connection was refused.
    static func connectedSocket(to port: Int) -> Int32? {
        let fd = socket(AF_INET, streamSocket, 0)
        guard fd >= 0 else { return nil }
        var address = address(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            closeSocket(fd)
            return nil
        }
        return fd
    }

    private static func address(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}

/// A bound, never-listening socket on 127.0.0.1 (``Loopback/refusingPort()``).
public struct RefusingPort: Sendable {
    let socket: Int32
    /// The port every connection to is refused.
    public let port: Int

    /// Closes the socket: the port is free again.
    public func close() { closeSocket(socket) }
}
