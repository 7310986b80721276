// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Depot",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "Depot", targets: ["Depot"]),
        .library(name: "DepotSQL", targets: ["DepotSQL"]),
        .library(name: "DepotSQLite", targets: ["DepotSQLite"]),
        .library(name: "DepotTesting", targets: ["DepotTesting"]),
        .executable(name: "airports", targets: ["airports"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        .target(name: "Depot"),
        .target(name: "DepotSQL", dependencies: ["Depot"]),
        .target(
            name: "DepotSQLite",
            dependencies: [
                "Depot", "DepotSQL",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]),
        .target(name: "DepotTesting", dependencies: ["Depot"]),
        .target(
            name: "AirportsExample", dependencies: ["Depot", "DepotSQLite"],
            resources: [.copy("Resources/airports.csv"), .copy("Resources/airports.LICENSE")]),
        .executableTarget(
            name: "airports",
            dependencies: ["AirportsExample", .product(name: "ArgumentParser", package: "swift-argument-parser")]),
        .testTarget(name: "DepotTests", dependencies: ["Depot", "DepotTesting"]),
        .testTarget(name: "DepotSQLTests", dependencies: ["Depot", "DepotSQL", "DepotTesting"]),
        .testTarget(
            name: "DepotSQLiteTests",
            dependencies: [
                "Depot", "DepotSQLite", "DepotTesting",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]),
        .testTarget(name: "AirportsExampleTests", dependencies: ["AirportsExample", "Depot", "DepotSQLite"]),
    ],
    swiftLanguageModes: [.v6]
)
