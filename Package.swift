// swift-tools-version:6.0
// provision: declarative provisioning of MapLibre Native offline databases.
// No third-party packages: Foundation, Dispatch, XCTest and system C libraries
// (SQLite, libcurl, zlib, libcrypto) through module maps.
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
        .target(name: "ProvisionCodecs", dependencies: ["CZlib", "CCrypto"]),
        .target(name: "ProvisionLabels", dependencies: ["ProvisionModel", "ProvisionCodecs"]),
        .target(name: "ProvisionPlanning", dependencies: ["ProvisionModel", "TileMath", "ProvisionCodecs", "ProvisionLabels"]),
        .target(name: "PlaceIndex", dependencies: ["TileMath", "ProvisionLabels"]),
        .target(name: "ProvisionStore", dependencies: ["ProvisionModel", "TileMath", "ProvisionCodecs", "CSQLite", "PlaceIndex"]),
        .target(name: "ProvisionExecution", dependencies: ["ProvisionModel", "TileMath", "ProvisionCodecs", "CCurl"]),
        .target(name: "ProvisionReports", dependencies: ["ProvisionModel", "TileMath", "ProvisionCodecs"]),
        .target(name: "ProvisionEngine", dependencies: [
            "TileMath", "ProvisionModel", "ProvisionCodecs", "ProvisionPlanning", "ProvisionStore",
            "ProvisionExecution", "ProvisionReports",
        ]),
        .target(name: "ProvisionCLI", dependencies: [
            "TileMath", "ProvisionModel", "ProvisionCodecs", "ProvisionPlanning", "ProvisionStore",
            "ProvisionExecution", "ProvisionReports", "ProvisionEngine",
        ]),
        .executableTarget(name: "provision", dependencies: ["ProvisionCLI"]),
        .target(name: "RoutingGraph", dependencies: ["TileMath"]),
        .target(name: "ProvisionTestSupport", dependencies: ["ProvisionModel", "ProvisionCodecs"]),

        .testTarget(name: "TileMathTests", dependencies: ["TileMath"], resources: [.copy("Fixtures")]),
        .testTarget(name: "ProvisionModelTests", dependencies: ["ProvisionModel"]),
        .testTarget(name: "ProvisionCodecsTests", dependencies: ["ProvisionCodecs", "ProvisionTestSupport", "TileMath"],
                    resources: [.copy("Fixtures")]),
        .testTarget(name: "ProvisionLabelsTests", dependencies: ["ProvisionLabels", "ProvisionModel"]),
        .testTarget(name: "ProvisionPlanningTests", dependencies: ["ProvisionPlanning", "ProvisionModel", "ProvisionCodecs"]),
        .testTarget(name: "ProvisionStoreTests", dependencies: ["ProvisionStore", "ProvisionModel", "ProvisionCodecs", "ProvisionTestSupport", "TileMath"]),
        .testTarget(name: "ProvisionExecutionTests", dependencies: [
            "ProvisionExecution", "ProvisionModel", "ProvisionCodecs", "ProvisionStore", "ProvisionTestSupport",
        ]),
        .testTarget(name: "ProvisionReportsTests", dependencies: ["ProvisionReports", "ProvisionModel", "ProvisionCodecs", "TileMath",
                                                                 "ProvisionTestSupport"],
                    exclude: ["Goldens"]),
        .testTarget(name: "ProvisionEngineTests", dependencies: [
            "ProvisionEngine", "ProvisionModel", "ProvisionStore", "ProvisionReports", "ProvisionPlanning",
        ]),
        .testTarget(name: "ProvisionCLITests", dependencies: ["ProvisionCLI", "ProvisionModel", "ProvisionEngine"]),
        .testTarget(name: "RoutingGraphTests", dependencies: ["RoutingGraph", "TileMath", "ProvisionTestSupport", "ProvisionCodecs"]),
        .testTarget(name: "PlaceIndexTests", dependencies: ["PlaceIndex", "ProvisionStore", "ProvisionLabels", "TileMath",
                                                            "ProvisionTestSupport"]),
        .testTarget(name: "ProvisionEndToEndTests", dependencies: ["ProvisionTestSupport", "ProvisionModel", "ProvisionCodecs"]),
    ],
    swiftLanguageModes: [.v6]
)
