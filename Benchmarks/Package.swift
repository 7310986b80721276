// swift-tools-version: 6.2
import PackageDescription

// Benchmarks live in their own package so the main build and CI stay light.
let package = Package(
    name: "DepotBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Depot", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/vapor/fluent-kit", from: "1.57.0"),
        .package(url: "https://github.com/vapor/fluent-sqlite-driver", from: "4.9.0"),
    ],
    targets: [
        // The result line, medians and peak memory every benchmark shares.
        .target(name: "BenchHarness"),
        .executableTarget(
            name: "depot-bench",
            dependencies: [
                "BenchHarness",
                .product(name: "Depot", package: "Depot"),
                .product(name: "DepotSQL", package: "Depot"),
                .product(name: "DepotSQLite", package: "Depot"),
                .product(name: "DepotPostgres", package: "Depot"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "FluentKit", package: "fluent-kit"),
                .product(name: "FluentSQLiteDriver", package: "fluent-sqlite-driver"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]),
        // APIClient on each real transport against the same transport called directly; the
        // loopback server runs in a child process (`depot-http-bench --serve`).
        .executableTarget(
            name: "depot-http-bench",
            dependencies: [
                "BenchHarness",
                .product(name: "DepotHTTP", package: "Depot"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(
                    name: "AsyncHTTPClient", package: "async-http-client",
                    condition: .when(platforms: [.linux])),
            ]),
        // DepotSync against raw baselines: the initial pull of the airports feed (APIClient + SQLite
        // C API), one incremental change, and the outbox's cost per local edit; the feed is served
        // by a Hummingbird server on 127.0.0.1 in the same process.
        .executableTarget(
            name: "depot-sync-bench",
            dependencies: [
                "BenchHarness",
                .product(name: "Depot", package: "Depot"),
                .product(name: "DepotSQLite", package: "Depot"),
                .product(name: "DepotHTTP", package: "Depot"),
                .product(name: "DepotSync", package: "Depot"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(
                    name: "AsyncHTTPClient", package: "async-http-client",
                    condition: .when(platforms: [.linux])),
            ]),
        // DepotSyncServer's feed and push routes against the same work by hand (Hummingbird handlers
        // over PostgresNIO), 16 concurrent clients on one PostgreSQL (DEPOT_POSTGRES_URL).
        .executableTarget(
            name: "depot-sync-server-bench",
            dependencies: [
                "BenchHarness",
                .product(name: "Depot", package: "Depot"),
                .product(name: "DepotPostgres", package: "Depot"),
                .product(name: "DepotSync", package: "Depot"),
                .product(name: "DepotSyncServer", package: "Depot"),
                .product(name: "DepotSyncHummingbird", package: "Depot"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
