import Depot
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore

/// The airports HTTP API over any Depot store, on Hummingbird.
///
/// | Request | Answer |
/// | --- | --- |
/// | `GET /airports?country=&q=&near=LAT,LON&min_elevation=&after=&limit=` | JSON array of airports |
/// | `GET /airports/{icao}` | one airport, or 404 |
/// | `PATCH /airports/{icao}` | applies a partial JSON body; answers the updated airport |
/// | `GET /dataset` | ``DatasetInfo``: import epoch, newest revision, airport count |
/// | `GET /changes?since=R&country=&limit=` | ``ChangesPage``: partial records changed after `R` |
///
/// Every filter and the order run in the store. A bad parameter or body answers 400 with
/// `{"error": "…"}` naming it; an unknown icao 404. With a tracer bootstrapped, each request is a
/// server span (Hummingbird's `TracingMiddleware`) that continues the trace the client sent.
///
/// ```swift
/// let server = try await AirportsServer.start(store: store)   // 127.0.0.1, an ephemeral port
/// print(server.baseURL)                                      // http://127.0.0.1:49152
/// await server.stop()
/// ```
public final class AirportsServer: Sendable {
    /// The port the server listens on.
    public let port: Int
    /// `http://127.0.0.1:PORT`.
    public let baseURL: URL
    private let task: Task<Void, any Error>

    private init(port: Int, baseURL: URL, task: Task<Void, any Error>) {
        self.port = port
        self.baseURL = baseURL
        self.task = task
    }

    /// What the server accepts, so that no client can make it hold more than this.
    public struct Limits: Sendable {
        /// How long a connection may stay idle before the server closes it.
        public var idleTimeout: Duration = .seconds(30)
        /// The most connections served at once; more wait in the listen queue.
        public var maximumConnections = 256
        /// The longest text member a `PATCH` may set, in characters.
        public var maximumTextLength = 200
        /// How many changes `GET /changes` can reach back: older ones are dropped as new ones come
        /// (a client further behind is told to sync in full, ``ChangesPage/pruned``).
        public var changeLogLength = 10_000

        /// The defaults: 30 s idle, 256 connections, 200-character texts, 10,000 changes.
        public init() {}

        /// Throws `DepotError` of kind `.invalidQuery` naming the first limit that is not positive
        /// (a server with no connection, no text or no change log to serve could only hang or lose
        /// changes).
        func validate() throws {
            let positive: [(String, Bool)] = [
                ("idleTimeout", idleTimeout > .zero), ("maximumConnections", maximumConnections > 0),
                ("maximumTextLength", maximumTextLength > 0), ("changeLogLength", changeLogLength > 0),
            ]
            if let (name, _) = positive.first(where: { !$0.1 }) {
                throw DepotError(.invalidQuery, "AirportsServer.Limits.\(name) must be positive")
            }
        }
    }

    /// Starts the API on `host:port` (port 0: any free one) and returns once it listens.
    ///
    /// - Throws: `DepotError` of kind `.connection` naming the address when the server cannot
    ///   listen there (the port is taken, the host is not this machine's); `.invalidQuery` naming
    ///   a limit that is not positive.
    public static func start(
        store: any Store, host: String = "127.0.0.1", port: Int = 0, limits: Limits = Limits()
    ) async throws -> AirportsServer {
        let (bound, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = try await application(store: store, host: host, port: port, limits: limits) { port in
            continuation.yield(port)
            continuation.finish()
        }
        // A server that cannot bind never runs: its task ends, and so does the wait for its port.
        let task = Task {
            defer { continuation.finish() }
            try await app.run()
        }
        var listening = 0
        for await port in bound { listening = port }
        guard listening > 0, let url = URL(string: "http://\(host):\(listening)") else {
            task.cancel()
            let reason: String
            do {
                try await task.value
                reason = "it stopped before listening"
            } catch {
                reason = "\(error)"
            }
            throw DepotError(.connection, "the airports API could not listen on \(host):\(port): \(reason)")
        }
        return AirportsServer(port: listening, baseURL: url, task: task)
    }

    /// Stops listening and waits until the server has shut down.
    public func stop() async {
        task.cancel()
        _ = try? await task.value
    }

    /// The Hummingbird application serving `store` (for `airports serve`, which runs it until
    /// SIGINT/SIGTERM). Creates the dataset row when the store has none.
    public static func application(
        store: any Store, host: String = "127.0.0.1", port: Int = 0, limits: Limits = Limits(),
        onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws -> some ApplicationProtocol {
        try limits.validate()
        try await AirportImporter.ensureDataset(in: store)
        let router = Router()
        // Continues the caller's trace (W3C `traceparent` with an OpenTelemetry tracer): one server
        // span per request, under which the store's transaction and statement spans nest.
        router.middlewares.add(TracingMiddleware())
        AirportsRoutes(store: store, limits: limits).add(to: router)
        return Application(
            router: router, server: .http1(configuration: .init(idleTimeout: TimeAmount(limits.idleTimeout))),
            configuration: .init(
                address: .hostname(host, port: port), serverName: "depot-airports",
                availableConnectionsDelegate: MaximumAvailableConnections(limits.maximumConnections)),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) },
            logger: Logger(label: "airports-api", factory: { _ in SwiftLogNoOpLogHandler() }))
    }
}

/// A request the API refuses: the status and the message of its `{"error": …}` body.
struct APIProblem: Error {
    var status: HTTPResponse.Status
    var message: String

    static func badRequest(_ message: String) -> APIProblem { APIProblem(status: .badRequest, message: message) }

    /// Refuses text a client sends (path, query or body) that holds NUL — one answer on every
    /// store: PostgreSQL refuses NUL in text, SQLite would keep it — or is over `maximumLength`
    /// characters, naming it by `label`.
    static func checkText(_ text: String, named label: String, maximumLength: Int) throws {
        guard !text.unicodeScalars.contains("\u{0}") else {
            throw badRequest("\(label) cannot contain NUL (U+0000)")
        }
        guard text.count <= maximumLength else {
            throw badRequest("\(label) is \(text.count) characters long; at most \(maximumLength) are accepted")
        }
    }
}

/// The routes, each a function of the request to a value or an ``APIProblem``.
struct AirportsRoutes: Sendable {
    let store: any Store
    let limits: AirportsServer.Limits

    /// Largest `limit` a list or a changes page takes.
    static let maximumLimit = 10_000
    /// Largest `PATCH` body.
    static let maximumBody = 64 << 10

    func add(to router: Router<BasicRequestContext>) {
        router.get("/airports") { request, _ in await respond { try await list(request) } }
        router.get("/airports/:icao") { _, context in
            await respond { try await airport(icao(context)) }
        }
        router.patch("/airports/:icao") { request, context in
            await respond { try await patch(icao(context), request) }
        }
        router.get("/dataset") { _, _ in await respond { try await dataset() } }
        router.get("/changes") { request, _ in await respond { try await changes(request) } }
        addSync(to: router)
        router.get("/health") { _, _ in
            let (status, body) = await health()
            return Self.json(status, (try? Self.encoder.encode(body)) ?? Data())
        }
    }

    /// `GET /health`: 200 `{"status":"ok"}` when the store answers a read, else 503
    /// `{"status":"unavailable","error":…}` with an incident number (the error goes to the log),
    /// for a load balancer or an orchestrator's probe.
    func health() async -> (status: HTTPResponse.Status, body: [String: String]) {
        do {
            _ = try await store.repository(AirportDataset.self).find(AirportDataset.current)
            return (.ok, ["status": "ok"])
        } catch {
            let incident = Self.incident("health check failed", error)
            return (
                .serviceUnavailable,
                ["status": "unavailable", "error": "the store did not answer (incident \(incident))"]
            )
        }
    }

    // MARK: Handlers

    func list(_ request: Request) async throws -> [AirportRecord] {
        let parameters = try QueryParameters(
            request.uri.query, allowed: ["country", "q", "near", "min_elevation", "after", "limit"],
            maximumTextLength: limits.maximumTextLength)
        var query = AirportQuery(limit: try parameters.limit(default: 100))
        query.country = try parameters.text("country")
        query.contains = try parameters.text("q")
        query.after = try parameters.text("after")
        if let near = try parameters.text("near") {
            guard let point = Coordinate(parsing: near) else {
                throw APIProblem.badRequest(
                    "near must be LAT,LON in degrees (latitude -90…90, longitude -180…180), got '\(near)'")
            }
            guard query.after == nil else {
                throw APIProblem.badRequest("after pages results in icao order; it cannot be combined with near")
            }
            query.near = point
        }
        if let text = try parameters.text("min_elevation") {
            guard let value = Double(text), value.isFinite else {
                throw APIProblem.badRequest("min_elevation must be a number of feet, got '\(text)'")
            }
            query.minimumElevation = value
        }
        return try await query.run(on: store.repository(Airport.self)).map {
            AirportRecord($0.airport, distanceKilometers: $0.distanceKilometers)
        }
    }

    func airport(_ icao: String) async throws -> AirportRecord {
        guard let airport = try await store.repository(Airport.self).find(icao) else {
            throw APIProblem(status: .notFound, message: "no airport with icao '\(icao)'")
        }
        return AirportRecord(airport)
    }

    func patch(_ icao: String, _ request: Request) async throws -> AirportRecord {
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: Self.maximumBody)
        } catch {
            throw APIProblem(status: .contentTooLarge, message: "the body is larger than \(Self.maximumBody) bytes")
        }
        let record = try AirportPatchBody.decode(
            Data(buffer: body), icao: icao, maximumTextLength: limits.maximumTextLength)
        let members = String(decoding: try JSONEncoder().encode(record), as: UTF8.self)
        let hasChanges = record != AirportRecord(icao: icao)
        // The patch writes only the fields it carries (no read-modify-write to lose). Change-log
        // writers take turns: each first rewrites the dataset row as it is, which holds that row's
        // lock until commit (PostgreSQL; SQLite has one writer anyway), so the next revision read
        // after it is free. Should another writer still take the number first (a dataset row
        // replaced by an import), the insert fails on the key and the whole write runs again.
        let updated = try await retryingTakenRevision(attempts: 5) {
            try await store.write { tx -> Airport? in
                let airports = tx.repository(Airport.self)
                guard let current = try await airports.find(icao) else { return nil }
                guard hasChanges else { return current }
                let datasets = tx.repository(AirportDataset.self)
                if let dataset = try await datasets.find(AirportDataset.current) { try await datasets.upsert(dataset) }
                try await airports.persist([record], mapper: AirportRecordMapper())
                try await AirportFieldTimes.touch(record, at: Date().timeIntervalSince1970, in: tx)
                let changes = tx.repository(AirportChange.self)
                let head = try await changes.first(orderBy: [.descending(\.revision)])?.revision ?? 0
                try await changes.insert(AirportChange(revision: head + 1, icao: icao, members: members))
                // The log keeps the newest changes only; a client further behind syncs in full.
                try await changes.remove(where: \.revision <= head + 1 - limits.changeLogLength)
                return try await airports.find(icao)
            }
        }
        guard let updated else { throw APIProblem(status: .notFound, message: "no airport with icao '\(icao)'") }
        return AirportRecord(updated)
    }

    /// Runs `body` again (up to `attempts` times in all) while it fails because the change log's
    /// next revision was taken by another writer.
    func retryingTakenRevision<T>(attempts: Int, _ body: () async throws -> T) async throws -> T {
        var attempt = 1
        while true {
            do {
                return try await body()
            } catch let error as DepotError
                where error.kind == .constraintViolation
                && [AirportChange.schema.tableName, AirportPush.schema.tableName].contains(error.table ?? "")
                && attempt < attempts
            {
                attempt += 1
            }
        }
    }

    func dataset() async throws -> DatasetInfo {
        let info = try await store.repository(AirportDataset.self).find(AirportDataset.current)
        let head = try await store.repository(AirportChange.self).first(orderBy: [.descending(\.revision)])
        return DatasetInfo(
            epoch: info?.epoch ?? "", revision: head?.revision ?? 0,
            airports: try await store.repository(Airport.self).count())
    }

    func changes(_ request: Request) async throws -> ChangesPage {
        let parameters = try QueryParameters(
            request.uri.query, allowed: ["since", "country", "limit"], maximumTextLength: limits.maximumTextLength)
        guard let sinceText = try parameters.text("since") else {
            throw APIProblem.badRequest("since is required: the revision the client has (0 for all changes)")
        }
        guard let since = Int(sinceText), since >= 0 else {
            throw APIProblem.badRequest("since must be a revision (a whole number ≥ 0), got '\(sinceText)'")
        }
        let limit = try parameters.limit(default: 1_000)
        let country = try parameters.text("country")
        let epoch = try await store.repository(AirportDataset.self).find(AirportDataset.current)?.epoch ?? ""
        let rows = try await store.repository(AirportChange.self).fetch(
            where: \.revision > since, orderBy: [.ascending(\.revision)], limit: limit)
        // Revisions are consecutive: a first one past `since + 1` means the log dropped changes the
        // client has not seen (read in the same statement as the page, so a prune in between
        // cannot hide one), and it cannot catch up from here.
        if let first = rows.first?.revision, first - 1 > since {
            return ChangesPage(epoch: epoch, revision: since, more: false, changes: [], pruned: true)
        }
        var records = try rows.map { row in
            do {
                return try JSONDecoder().decode(AirportRecord.self, from: Data(row.members.utf8))
            } catch {
                throw DepotError(
                    .decodingFailed, "change \(row.revision) of '\(row.icao)' is not an airport record: \(error)",
                    table: AirportChange.schema.tableName, column: "members")
            }
        }
        if let country {
            // Changes of airports in the country, and every change that moves an airport.
            let keys = Set(records.map(\.icao))
            let inCountry = try await store.repository(Airport.self).fetch(
                where: .in(\.icao, keys) && \.country == country)
            let kept = Set(inCountry.map(\.icao))
            records = records.filter { kept.contains($0.icao) || $0.$country.isPresent }
        }
        return ChangesPage(
            epoch: epoch, revision: rows.last?.revision ?? since, more: rows.count == limit, changes: records)
    }

    // MARK: Plumbing

    func icao(_ context: BasicRequestContext) throws -> String {
        let raw = context.parameters.get("icao") ?? ""
        let icao = raw.removingPercentEncoding ?? raw
        guard !icao.isEmpty else { throw APIProblem.badRequest("the path lacks an icao") }
        try APIProblem.checkText(icao, named: "the icao in the path", maximumLength: limits.maximumTextLength)
        return icao
    }

    /// Runs `body`, answering its value as JSON, an ``APIProblem`` as its status, and any other
    /// error as 500 with an incident number only: the error itself (file paths, the database's
    /// address, engine messages) goes to the server's log under that number, never to a client.
    func respond(_ body: () async throws -> some Encodable) async -> Response {
        do {
            return try Self.json(.ok, Self.encoder.encode(try await body()))
        } catch let problem as APIProblem {
            return Self.problem(problem.status, problem.message)
        } catch {
            let incident = Self.incident("request failed", error)
            return Self.problem(
                .internalServerError, "the server could not answer this request (incident \(incident))")
        }
    }

    /// Logs `error` under a new incident number and returns the number, which is all a client is
    /// told: the error itself (file paths, the database's address, engine messages) stays in the log.
    static func incident(_ what: String, _ error: any Error) -> String {
        let incident = UUID().uuidString.prefix(8).lowercased()
        logger.error("\(what)", metadata: ["incident": "\(incident)", "error": "\(error)"])
        return incident
    }

    /// Where failures are logged (swift-log; standard error unless the process bootstraps another handler).
    static let logger = Logger(label: "airports-api")

    /// Sorted keys, slashes unescaped: stable output a person can read.
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    static func problem(_ status: HTTPResponse.Status, _ message: String) -> Response {
        let body = (try? encoder.encode(["error": message])) ?? Data(#"{"error":"unknown"}"#.utf8)
        return json(status, body)
    }

    static func json(_ status: HTTPResponse.Status, _ data: Data) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

/// A query string read as a form (`+` is a space, `%XX` escapes), refusing unknown and repeated
/// parameters by name.
///
/// Not Hummingbird's `request.uri.queryParameters` (2.28): it leaves `+` as `+` (a browser's
/// `q=san+jose` would search for "san+jose"), does not decode names, and keeps a malformed `%`
/// escape as raw text where this API answers 400 naming it.
struct QueryParameters {
    private var values: [String: String] = [:]

    /// The longest value a parameter may have, in characters.
    private let maximumTextLength: Int

    init(_ query: String?, allowed: Set<String>, maximumTextLength: Int) throws {
        self.maximumTextLength = maximumTextLength
        for item in (query ?? "").split(separator: "&", omittingEmptySubsequences: true) {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decoded(_ text: Substring) throws -> String {
                let spaced = text.replacingOccurrences(of: "+", with: " ")
                guard let value = spaced.removingPercentEncoding else {
                    throw APIProblem.badRequest("'\(text)' in the query is not valid percent-encoding")
                }
                return value
            }
            let name = try decoded(parts[0])
            guard allowed.contains(name) else {
                throw APIProblem.badRequest(
                    "unknown parameter '\(name)'; this endpoint takes \(allowed.sorted().joined(separator: ", "))")
            }
            guard values[name] == nil else { throw APIProblem.badRequest("parameter '\(name)' is given twice") }
            values[name] = parts.count > 1 ? try decoded(parts[1]) : ""
        }
    }

    /// The parameter's value; an empty value is refused.
    func text(_ name: String) throws -> String? {
        guard let value = values[name] else { return nil }
        guard !value.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw APIProblem.badRequest("\(name) is empty")
        }
        try APIProblem.checkText(value, named: name, maximumLength: maximumTextLength)
        return value
    }

    func limit(default fallback: Int) throws -> Int {
        guard let text = try text("limit") else { return fallback }
        guard let value = Int(text), (1...AirportsRoutes.maximumLimit).contains(value) else {
            throw APIProblem.badRequest(
                "limit must be a whole number from 1 to \(AirportsRoutes.maximumLimit), got '\(text)'")
        }
        return value
    }
}

/// Reads and checks a `PATCH /airports/{icao}` body.
enum AirportPatchBody {
    static func decode(_ data: Data, icao: String, maximumTextLength: Int) throws -> AirportRecord {
        let object: [String: Any]
        do {
            guard let parsed = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw APIProblem.badRequest("the body must be a JSON object of airport members")
            }
            object = parsed
        } catch let problem as APIProblem {
            throw problem
        } catch {
            throw APIProblem.badRequest("the body is not valid JSON")
        }
        let unknown = object.keys.filter { !AirportRecord.memberNames.contains($0) }.sorted()
        guard unknown.isEmpty else {
            throw APIProblem.badRequest(
                "unknown member\(unknown.count == 1 ? "" : "s") \(unknown.map { "'\($0)'" }.joined(separator: ", ")); "
                    + "an airport has \(AirportRecord.memberNames.joined(separator: ", "))")
        }
        for name in AirportRecord.requiredMemberNames where object[name] is NSNull {
            throw APIProblem.badRequest("'\(name)' cannot be null")
        }
        if let given = object["icao"] {
            guard let text = given as? String, text == icao else {
                throw APIProblem.badRequest("icao cannot change: the path names '\(icao)', the body '\(given)'")
            }
        }
        var withKey = data
        if object["icao"] == nil {
            // Give the record its key without re-serializing the members (numbers stay exact).
            let key = String(decoding: try JSONEncoder().encode(icao), as: UTF8.self)
            let brace = data.firstIndex(of: UInt8(ascii: "{")) ?? data.startIndex
            let member = #""icao":"# + key + (object.isEmpty ? "" : ",")
            withKey = data.prefix(through: brace) + Data(member.utf8) + data.suffix(from: brace + 1)
        }
        let record: AirportRecord
        do {
            record = try JSONDecoder().decode(AirportRecord.self, from: withKey)
        } catch let DecodingError.typeMismatch(type, context) {
            let member = context.codingPath.first?.stringValue ?? "?"
            throw APIProblem.badRequest("'\(member)' must be \(type == String.self ? "a string" : "a number")")
        } catch {
            throw APIProblem.badRequest("the body is not an airport record: \(error)")
        }
        try check(record, maximumTextLength: maximumTextLength)
        return record
    }

    /// Refuses a record whose members break the API's rules: `null` for a required member, empty
    /// names, texts over the limit, coordinates out of range.
    static func check(_ record: AirportRecord, maximumTextLength: Int) throws {
        for name in AirportRecord.requiredMemberNames where record.member(name) == "null" {
            throw APIProblem.badRequest("'\(name)' cannot be null")
        }
        for (name, field) in [("name", record.$name), ("country", record.$country)] {
            if case .value(let text) = field, text.trimmingCharacters(in: .whitespaces).isEmpty {
                throw APIProblem.badRequest("'\(name)' cannot be empty")
            }
        }
        let texts: [(String, String?)] = [
            ("iata", record.iata), ("name", record.name), ("city", record.city), ("subd", record.subdivision),
            ("country", record.country), ("tz", record.timeZone), ("lid", record.localCode),
        ]
        for case (let name, let text?) in texts {
            try APIProblem.checkText(text, named: "'\(name)'", maximumLength: maximumTextLength)
        }
        if let latitude = record.latitude, !(-90...90).contains(latitude) {
            throw APIProblem.badRequest("'lat' must be within -90…90, got \(latitude)")
        }
        if let longitude = record.longitude, !(-180...180).contains(longitude) {
            throw APIProblem.badRequest("'lon' must be within -180…180, got \(longitude)")
        }
    }
}

extension Coordinate {
    /// `LAT,LON` in degrees, within range; `nil` otherwise.
    public init?(parsing text: String) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map {
            Double($0.trimmingCharacters(in: .whitespaces))
        }
        guard parts.count == 2, let latitude = parts[0], let longitude = parts[1], (-90...90).contains(latitude),
            (-180...180).contains(longitude)
        else { return nil }
        self.init(latitude: latitude, longitude: longitude)
    }
}
