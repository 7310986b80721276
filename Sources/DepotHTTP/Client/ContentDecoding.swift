import CompressNIO
import Foundation
import NIOCore

/// Decodes `gzip` and `deflate` bodies, so that every transport delivers the same bytes.
enum ContentDecoding {
    /// What the client sends as `Accept-Encoding`.
    static let acceptEncoding = "gzip, deflate"

    enum Failure: Error {
        case tooLarge
        case corrupt(String, underlying: any Error)
        case unsupported(String)
    }

    /// `response` with its body decoded and `Content-Encoding`/`Content-Length` removed; bodies
    /// without a content coding (or `identity`) pass through untouched.
    static func decode(_ response: TransportResponse, maximumSize: Int) throws(Failure) -> TransportResponse {
        guard let header = response.headers["Content-Encoding"] else { return response }
        let codings = header.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            .filter { !$0.isEmpty && $0 != "identity" }
        var decoded = response
        decoded.headers.remove("Content-Encoding")
        decoded.headers.remove("Content-Length")
        guard !codings.isEmpty, !response.body.isEmpty else { return decoded }
        var body = response.body
        // Codings are listed in the order they were applied: undo them last to first.
        for coding in codings.reversed() {
            body = try decodeOne(coding, body, maximumSize: maximumSize)
        }
        decoded.body = body
        return decoded
    }

    private static func decodeOne(_ coding: String, _ body: Data, maximumSize: Int) throws(Failure) -> Data {
        let algorithm: ZlibAlgorithm
        switch coding {
        case "gzip", "x-gzip":
            // A transport whose library decoded the body but kept the field: nothing to do.
            guard body.starts(with: [0x1F, 0x8B]) else { return body }
            algorithm = .gzip
        case "deflate":
            // "deflate" means zlib-wrapped (RFC 9110), but some servers send raw deflate.
            algorithm = hasZlibHeader(body) ? .zlib : .deflate
        default:
            throw .unsupported(coding)
        }
        var buffer = ByteBuffer(bytes: body)
        do {
            let output = try buffer.decompress(with: algorithm, maxSize: maximumSize)
            return Data(output.readableBytesView)
        } catch let error as CompressNIOError where error == .bufferOverflow {
            throw .tooLarge
        } catch {
            throw .corrupt(coding, underlying: error)
        }
    }

    private static func hasZlibHeader(_ body: Data) -> Bool {
        guard body.count >= 2 else { return false }
        let cmf = body[body.startIndex]
        let flg = body[body.startIndex + 1]
        return cmf & 0x0F == 8 && (UInt16(cmf) << 8 | UInt16(flg)) % 31 == 0
    }
}
