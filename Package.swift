// swift-tools-version:6.0
// provision: declarative provisioning of MapLibre Native offline databases.
// No third-party packages: Foundation, Dispatch, XCTest and system C libraries
// (SQLite, libcurl, zlib) through module maps.
import PackageDescription

let package = Package(
    name: "provision",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "provision", targets: ["provision"]),
    ],
    targets: [
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        .systemLibrary(name: "CCurl", path: "Sources/CCurl", pkgConfig: "libcurl",
                       providers: [.apt(["libcurl4-openssl-dev"]), .brew(["curl"])]),
        .systemLibrary(name: "CZlib", path: "Sources/CZlib", pkgConfig: "zlib",
                       providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CCrypto", path: "Sources/CCrypto", pkgConfig: "libcrypto",
                       providers: [.apt(["libssl-dev"]), .brew(["openssl"])]),

        .target(name: "TileMath"),
        .target(name: "ProvisionModel", dependencies: ["TileMath"]),
        .target(name: "ProvisionPlanning", dependencies: ["ProvisionModel", "TileMath"]),
        .target(name: "ProvisionStore", dependencies: ["ProvisionModel", "TileMath", "CSQLite", "CZlib", "CCrypto"]),
        .target(name: "ProvisionExecution", dependencies: ["ProvisionModel", "TileMath", "CCurl", "CZlib"]),
        .target(name: "ProvisionReports", dependencies: ["ProvisionModel", "TileMath"]),
        .target(name: "ProvisionCLI", dependencies: [
            "TileMath", "ProvisionModel", "ProvisionPlanning", "ProvisionStore",
            "ProvisionExecution", "ProvisionReports",
        ], swiftSettings: [.swiftLanguageMode(.v5)]),
        .executableTarget(name: "provision", dependencies: ["ProvisionCLI"],
                          swiftSettings: [.swiftLanguageMode(.v5)]),
        .target(name: "ProvisionTestSupport", dependencies: ["ProvisionModel"]),

        .testTarget(name: "TileMathTests", dependencies: ["TileMath"], resources: [.copy("Fixtures")]),
        .testTarget(name: "ProvisionModelTests", dependencies: ["ProvisionModel"]),
        .testTarget(name: "ProvisionPlanningTests", dependencies: ["ProvisionPlanning", "ProvisionModel"]),
        .testTarget(name: "ProvisionStoreTests", dependencies: ["ProvisionStore", "ProvisionModel"]),
        .testTarget(name: "ProvisionExecutionTests", dependencies: [
            "ProvisionExecution", "ProvisionModel", "ProvisionStore", "ProvisionTestSupport",
        ]),
        .testTarget(name: "ProvisionReportsTests", dependencies: ["ProvisionReports", "ProvisionModel", "TileMath"]),
        .testTarget(name: "ProvisionEndToEndTests", dependencies: ["ProvisionTestSupport", "ProvisionModel"]),
    ],
    swiftLanguageModes: [.v6]
)
