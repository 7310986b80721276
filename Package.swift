// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Depot",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "Depot", targets: ["Depot"]),
        .library(name: "DepotTesting", targets: ["DepotTesting"]),
    ],
    targets: [
        .target(name: "Depot"),
        .target(name: "DepotTesting", dependencies: ["Depot"]),
        .testTarget(name: "DepotTests", dependencies: ["Depot", "DepotTesting"]),
    ],
    swiftLanguageModes: [.v6]
)
