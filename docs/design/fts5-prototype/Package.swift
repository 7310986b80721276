// swift-tools-version: 6.0
import PackageDescription

// A prototype for Depot issue #40: a custom FTS5 tokenizer whose tokens are Depot's words.
// DepotText holds copies of Depot's TextSearch/TextFolding/CaseFoldingTable (see REPORT.md: a
// path dependency on /work/main would build swift-syntax for Depot's macros).
let package = Package(
    name: "fts-proto",
    targets: [
        .target(name: "DepotText", swiftSettings: [.swiftLanguageMode(.v5)]),
        .target(name: "CFTS", linkerSettings: [.linkedLibrary("sqlite3")]),
        .executableTarget(
            name: "fts-proto", dependencies: ["DepotText", "CFTS"],
            swiftSettings: [.swiftLanguageMode(.v5)]),
    ]
)
