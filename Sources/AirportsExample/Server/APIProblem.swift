import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// A request the API refuses: the status and the message of its `{"error": …}` body. Handlers
/// throw it; Hummingbird answers it (it is an `HTTPResponseError`).
struct APIProblem: HTTPResponseError {
    var status: HTTPResponse.Status
    var message: String

    static func badRequest(_ message: String) -> APIProblem { APIProblem(status: .badRequest, message: message) }

    /// `{"error": message}` with the problem's status.
    func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = AirportsJSON.response(status, ["error": message])
        if status == .unauthorized { response.headers[.wwwAuthenticate] = "Bearer" }
        return response
    }

    /// Refuses text a client sends (path, query or body) that holds NUL — one answer on every
    /// store: PostgreSQL refuses NUL in text, SQLite would keep it — or is over `maximumLength`
    /// Unicode scalars, naming it by `label`. Scalars, not characters: what storage pays for (one
    /// letter with 25,000 combining marks is one character, and 50 KB).
    static func checkText(_ text: String, named label: String, maximumLength: Int) throws {
        guard !text.unicodeScalars.contains("\u{0}") else {
            throw badRequest("\(label) cannot contain NUL (U+0000)")
        }
        let length = text.unicodeScalars.count
        guard length <= maximumLength else {
            throw badRequest("\(label) is \(length) Unicode scalars long; at most \(maximumLength) are accepted")
        }
    }
}

/// Answers every error a handler throws that is not an HTTP answer already (an ``APIProblem``,
/// Hummingbird's `HTTPError`) with 500 and an incident number only: the error itself (file paths,
/// the database's address, engine messages) goes to the server's log under that number, never
/// to a client.
struct IncidentMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let answer as any HTTPResponseError {
            throw answer
        } catch {
            let incident = Self.incident("\(request.method) \(request.uri.path) failed", error)
            throw APIProblem(
                status: .internalServerError, message: "the server could not answer this request (incident \(incident))"
            )
        }
    }

    /// Logs `error` under a new incident number and returns the number, which is all a client is
    /// told.
    static func incident(_ what: String, _ error: any Error) -> String {
        let incident = UUID().uuidString.prefix(8).lowercased()
        AirportsJSON.logger.error("\(what)", metadata: ["incident": "\(incident)", "error": "\(error)"])
        return incident
    }
}

/// The request context of the airports API: Hummingbird's basic one, answering JSON with sorted
/// keys and unescaped slashes (stable output a person can read).
struct AirportsRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage

    init(source: Source) { coreContext = .init(source: source) }

    var responseEncoder: JSONEncoder { AirportsJSON.encoder }
}

/// The API's JSON and its log.
enum AirportsJSON {
    /// Sorted keys, slashes unescaped.
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// Where failures are logged (swift-log; standard error unless the process bootstraps another handler).
    static let logger = Logger(label: "airports-api")

    /// `value` as a JSON response with `status` (for answers other than 200 that carry a body).
    static func response(_ status: HTTPResponse.Status, _ value: some Encodable) -> Response {
        let data = (try? encoder.encode(value)) ?? Data(#"{"error":"unknown"}"#.utf8)
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
