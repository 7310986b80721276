// The README's "Operating Depot" sample, verbatim between the markers (ReadmeSampleTests checks it).
// Run in a process of its own by ProcessSampleTests (a file in the current folder, bootstraps once
// per process); its PostgresStore is made, never connected.
import CoreMetrics
import Depot
import DepotHTTP
import DepotPostgres
import DepotSQLite
import Foundation
import Logging
import Tracing

func storesThatLog() throws {
    // readme:begin
    var logger = Logger(label: "app.database")
    logger.logLevel = .trace  // every statement; .debug: transactions; .info: migrations
    let store = try SQLiteStore(
        path: "app.sqlite",
        logging: SQLLogging(logger: logger, slowStatementThreshold: .milliseconds(250)))

    var configuration = try PostgresStore.Configuration(url: "postgres://app@127.0.0.1/app")
    configuration.logging = SQLLogging(logger: logger, showsBoundValues: true)  // values too: not in production
    let server = PostgresStore(configuration: configuration)
    // readme:end
    _ = (store, server)
}

func storeWithMetrics() throws {
    // readme:begin
    let store = try SQLiteStore(path: "app.sqlite", metrics: SQLMetrics(dimensions: [("db", "app")]))
    // readme:end
    _ = store
}

// readme:begin
func startApp(metrics: some MetricsFactory, tracer: some Tracer, api: URL) throws -> (SQLiteStore, APIClient) {
    LoggingSystem.bootstrap(StreamLogHandler.standardError)
    MetricsSystem.bootstrap(metrics)
    InstrumentationSystem.bootstrap(tracer)
    let store = try SQLiteStore(path: "app.sqlite")  // spans, metrics and logs through them
    let client = APIClient(baseURL: api)  // a client span and the trace context on each request
    return (store, client)
}
// readme:end
