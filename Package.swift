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

        .target(name: "ProvisionFoundation"),
        .target(name: "TileMath"),
        .target(name: "ProvisionModel", dependencies: ["ProvisionFoundation", "TileMath"]),
        .target(name: "ProvisionCodecs", dependencies: ["CZlib", "CCrypto"]),
        .target(name: "ProvisionLabels", dependencies: ["ProvisionFoundation", "ProvisionModel", "ProvisionCodecs"]),
        .target(name: "ProvisionPlanning", dependencies: ["ProvisionFoundation", "ProvisionModel", "TileMath", "ProvisionCodecs", "ProvisionLabels"]),
        .target(name: "PlaceIndex", dependencies: ["TileMath", "ProvisionLabels"]),
        .target(name: "ProvisionStore", dependencies: ["ProvisionFoundation", "ProvisionModel", "TileMath", "ProvisionCodecs", "CSQLite", "PlaceIndex"]),
        .target(name: "ProvisionExecution", dependencies: ["ProvisionFoundation", "ProvisionModel", "TileMath", "ProvisionCodecs", "CCurl"]),
        .target(name: "ProvisionReports", dependencies: ["ProvisionFoundation", "ProvisionModel", "TileMath", "ProvisionCodecs"]),
        .target(name: "ProvisionEngine", dependencies: ["ProvisionFoundation", 
            "TileMath", "ProvisionModel", "ProvisionCodecs", "ProvisionPlanning", "ProvisionStore",
            "ProvisionExecution", "ProvisionReports",
        ]),
        .target(name: "ProvisionCLI", dependencies: ["ProvisionFoundation", 
            "TileMath", "ProvisionModel", "ProvisionCodecs", "ProvisionPlanning", "ProvisionStore",
            "ProvisionExecution", "ProvisionReports", "ProvisionEngine",
        ]),
        .executableTarget(name: "provision", dependencies: ["ProvisionCLI"]),
        .target(name: "RoutingGraph", dependencies: ["TileMath"]),
        .target(name: "ProvisionTestSupport", dependencies: ["ProvisionFoundation", "ProvisionModel", "ProvisionCodecs"]),

        .testTarget(name: "ProvisionFoundationTests", dependencies: ["ProvisionFoundation"]),
        .testTarget(name: "TileMathTests", dependencies: ["TileMath"], resources: [.copy("Fixtures")]),
        .testTarget(name: "ProvisionModelTests", dependencies: ["ProvisionFoundation", "ProvisionModel"]),
        .testTarget(name: "ProvisionCodecsTests", dependencies: ["ProvisionCodecs", "ProvisionTestSupport", "TileMath"],
                    resources: [.copy("Fixtures")]),
        .testTarget(name: "ProvisionLabelsTests", dependencies: ["ProvisionFoundation", "ProvisionLabels", "ProvisionModel"]),
        .testTarget(name: "ProvisionPlanningTests", dependencies: ["ProvisionFoundation", "ProvisionPlanning", "ProvisionModel", "ProvisionCodecs"]),
        .testTarget(name: "ProvisionStoreTests", dependencies: ["ProvisionFoundation", "ProvisionStore", "ProvisionModel", "ProvisionCodecs", "ProvisionTestSupport", "TileMath"]),
        .testTarget(name: "ProvisionExecutionTests", dependencies: ["ProvisionFoundation", 
            "ProvisionExecution", "ProvisionModel", "ProvisionCodecs", "ProvisionStore", "ProvisionTestSupport",
        ]),
        .testTarget(name: "ProvisionReportsTests", dependencies: ["ProvisionFoundation", "ProvisionReports", "ProvisionModel", "ProvisionCodecs", "TileMath",
                                                                 "ProvisionTestSupport"],
                    exclude: ["Goldens"]),
        .testTarget(name: "ProvisionEngineTests", dependencies: ["ProvisionFoundation", 
            "ProvisionEngine", "ProvisionModel", "ProvisionStore", "ProvisionReports", "ProvisionPlanning",
        ]),
        .testTarget(name: "ProvisionCLITests", dependencies: ["ProvisionFoundation", "ProvisionCLI", "ProvisionModel", "ProvisionEngine"]),
        .testTarget(name: "RoutingGraphTests", dependencies: ["RoutingGraph", "TileMath", "ProvisionTestSupport", "ProvisionCodecs"]),
        .testTarget(name: "PlaceIndexTests", dependencies: ["PlaceIndex", "ProvisionStore", "ProvisionLabels", "TileMath",
                                                            "ProvisionTestSupport"]),
        .testTarget(name: "ProvisionEndToEndTests", dependencies: ["ProvisionFoundation", "ProvisionTestSupport", "ProvisionModel", "ProvisionCodecs"]),
    ],
    swiftLanguageModes: [.v6]
)
