// swift-tools-version: 6.2
import CompilerPluginSupport
import PackageDescription

#if os(Linux)
    // There is no SwiftUI on Linux: the README's SwiftUI screen compiles there against a stand-in
    // (Tests/SwiftUIShim), and a test renders it. Elsewhere it uses SwiftUI. The stand-in is not
    // *named* SwiftUI: every module of a build shares one folder, so a module of that name would
    // make `canImport(SwiftUI)` true in dependencies (swift-custom-dump) and break their builds.
    // The sample's `import SwiftUI` reaches it through a module alias, in its test target only.
    let swiftUIShim: [Target] = [.target(name: "SwiftUIShim", path: "Tests/SwiftUIShim")]
    let swiftUIShimDependencies: [Target.Dependency] = ["SwiftUIShim"]
    let swiftUIShimSettings: [SwiftSetting] = [.unsafeFlags(["-module-alias", "SwiftUI=SwiftUIShim"])]
#else
    let swiftUIShim: [Target] = []
    let swiftUIShimDependencies: [Target.Dependency] = []
    let swiftUIShimSettings: [SwiftSetting] = []
#endif

let package = Package(
    name: "Depot",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "Depot", targets: ["Depot"]),
        .library(name: "DepotSQL", targets: ["DepotSQL"]),
        .library(name: "DepotSQLite", targets: ["DepotSQLite"]),
        .library(name: "DepotPostgres", targets: ["DepotPostgres"]),
        .library(name: "DepotHTTP", targets: ["DepotHTTP"]),
        .library(name: "DepotSync", targets: ["DepotSync"]),
        .library(name: "DepotSyncServer", targets: ["DepotSyncServer"]),
        .library(name: "DepotSyncHummingbird", targets: ["DepotSyncHummingbird"]),
        .library(name: "DepotTesting", targets: ["DepotTesting"]),
        .executable(name: "airports", targets: ["airports"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/adam-fowler/compress-nio", from: "1.5.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // `swift package generate-documentation` (the DocC catalogs; .ci/run builds them).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // Property-based fuzzing in the tests (seeded, shrinking).
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        // `@Entity`: the macro's implementation and its expansion tests.
        .package(url: "https://github.com/swiftlang/swift-syntax", exact: "603.0.1"),
        .package(url: "https://github.com/pointfreeco/swift-macro-testing", from: "0.7.0"),
    ],
    targets: [
        .target(name: "Depot", dependencies: ["DepotMacros"]),
        // The compiler plug-in behind `@Entity` (declared in Depot).
        .macro(
            name: "DepotMacros",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
            ]),
        .target(
            name: "DepotSQL",
            dependencies: [
                "Depot", .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]),
        // SQLite's search indexes: Depot's words as an FTS5 tokenizer (an ASCII fast path in C).
        .target(name: "CDepotFTS5", dependencies: [.product(name: "GRDBSQLite", package: "GRDB.swift")]),
        .target(
            name: "DepotSQLite",
            dependencies: [
                "Depot", "DepotSQL", "CDepotFTS5",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]),
        .target(
            name: "DepotPostgres",
            dependencies: [
                "Depot", "DepotSQL",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]),
        .target(
            name: "DepotHTTP",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(
                    name: "AsyncHTTPClient", package: "async-http-client",
                    condition: .when(platforms: [.linux])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(platforms: [.linux])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(platforms: [.linux])),
            ]),
        // Offline-first sync of a store with your own API: feeds, an outbox, conflict policies.
        .target(name: "DepotSync", dependencies: ["Depot", "DepotHTTP"]),
        // DepotSync's server half: feeds and pushes from any store, independent of HTTP frameworks.
        .target(
            name: "DepotSyncServer",
            dependencies: [
                "Depot", "DepotSync", .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]),
        // The server half's routes on Hummingbird.
        .target(
            name: "DepotSyncHummingbird",
            dependencies: [
                "Depot", "DepotSync", "DepotSyncServer",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]),
        .target(name: "DepotTesting", dependencies: ["Depot", "DepotSQL"]),
        // The conformance suite again, its fixtures declared with @Entity instead of hand-written
        // schemas (the same source files, linked, compiled with DEPOT_MACRO_FIXTURES): not a product.
        .target(
            name: "DepotTestingMacro", dependencies: ["Depot", "DepotSQL"], path: "Tests/DepotTestingMacro",
            swiftSettings: [.define("DEPOT_MACRO_FIXTURES")]),
        .target(
            name: "AirportsExample",
            dependencies: [
                "Depot", "DepotSQLite", "DepotHTTP", "DepotSync", "DepotSyncServer", "DepotSyncHummingbird",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            resources: [.copy("Resources/airports.csv"), .copy("Resources/airports.LICENSE")]),
        .executableTarget(
            name: "airports",
            dependencies: [
                "AirportsExample", "Depot", "DepotSQLite", "DepotPostgres", "DepotHTTP", "DepotSync",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // A process the migration tests kill midway (not a product).
        .executableTarget(
            name: "depot-migration-probe", dependencies: ["Depot", "DepotSQLite", "DepotPostgres"],
            path: "Tests/depot-migration-probe"),
        // The process the kill-loop tests kill at random moments (not a product).
        .executableTarget(
            name: "depot-kill-probe",
            dependencies: ["Depot", "DepotSQLite", "DepotPostgres", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Tests/depot-kill-probe"),
        // Sets the test process's parallelization width before Swift Testing starts (C: it must run
        // as the process loads). Linked through DepotTestSupport.
        .target(name: "DepotTestProcess", path: "Tests/DepotTestProcess"),
        // Test-only support (a PostgreSQL server from the environment, the migration probe): not a product.
        .target(
            name: "DepotTestSupport",
            dependencies: [
                "DepotTestProcess", "Depot", "DepotSQL", "DepotTesting", "DepotHTTP",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            path: "Tests/DepotTestSupport"),
        .testTarget(
            name: "DepotTests",
            dependencies: [
                "DepotTestingMacro",
                "Depot", "DepotSQL", "DepotTesting", "DepotTestSupport", "DepotTestProcess",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]),
        .testTarget(
            name: "DepotMacrosTests",
            dependencies: [
                "DepotMacros", .product(name: "MacroTesting", package: "swift-macro-testing"),
                .product(name: "SwiftSyntaxMacrosTestSupport", package: "swift-syntax"),
            ]),
        .testTarget(name: "DepotSQLTests", dependencies: ["Depot", "DepotSQL", "DepotTesting"]),
        .testTarget(
            name: "DepotSQLiteTests",
            dependencies: [
                "DepotTestingMacro",
                "Depot", "DepotSQLite", "DepotTesting", "DepotTestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]),
        .testTarget(
            name: "DepotPostgresTests",
            dependencies: [
                "DepotTestingMacro",
                "Depot", "DepotPostgres", "DepotSQL", "DepotSQLite", "DepotTesting", "DepotTestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]),
        .testTarget(
            name: "DepotHTTPTests",
            dependencies: [
                "DepotHTTP", "Depot", "DepotTestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(
                    name: "AsyncHTTPClient", package: "async-http-client",
                    condition: .when(platforms: [.linux])),
            ]),
        // Every Swift sample of the README, compiled (and most of them run).
        .testTarget(
            name: "ReadmeTests",
            dependencies: [
                "Depot", "DepotSQL", "DepotSQLite", "DepotPostgres", "DepotHTTP", "DepotTesting", "DepotTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]),
        .testTarget(
            name: "DepotSyncTests",
            dependencies: [
                "DepotSync", "Depot", "DepotHTTP", "DepotSQLite", "DepotPostgres", "DepotTestSupport",
                "AirportsExample", "DepotSyncServer", "DepotSyncHummingbird",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ] + swiftUIShimDependencies,
            swiftSettings: swiftUIShimSettings),
        .testTarget(
            name: "AirportsExampleTests",
            dependencies: [
                "AirportsExample", "Depot", "DepotSQLite", "DepotPostgres", "DepotHTTP", "DepotTesting",
                "DepotTestSupport", .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]),
    ] + swiftUIShim,
    swiftLanguageModes: [.v6]
)
