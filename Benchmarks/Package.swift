// swift-tools-version: 6.1
import PackageDescription

// Benchmarks live in their own package so the main build and CI stay light.
let package = Package(
    name: "DepotBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Depot", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        .executableTarget(
            name: "depot-bench",
            dependencies: [
                .product(name: "Depot", package: "Depot"),
                .product(name: "DepotSQLite", package: "Depot"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ])
    ],
    swiftLanguageModes: [.v6]
)
