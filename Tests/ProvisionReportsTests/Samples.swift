import Foundation
import ProvisionCodecs
import ProvisionModel
import ProvisionReports
import TileMath

/// Representative report values, built the way the planner, applier and audit build them.
enum Samples {
    static let template = "https://tiles.example.com/demo/tiles/streets/{z}/{x}/{y}.pbf"
    static let styleURL = "https://tiles.example.com/demo/styles/streets.json"
    static let tileJSONURL = "https://tiles.example.com/demo/tilesets/streets.json"
    static let jobDigest = digest("job")

    static func digest(_ seed: String) -> String { "sha256:" + SHA256.hex(Data(seed.utf8)) }

    static let styleRef = ResourceRef(url: styleURL, kind: .style)
    static let tileJSONRef = ResourceRef(url: tileJSONURL, kind: .source)
    static let glyphs = (0..<3).map { ResourceRef(url: "https://tiles.example.com/demo/fonts/Noto/\($0 * 256)-\($0 * 256 + 255).pbf", kind: .glyphs) }
    static let sprites = [ResourceRef(url: "https://tiles.example.com/demo/sprites/streets.json", kind: .spriteJSON),
                          ResourceRef(url: "https://tiles.example.com/demo/sprites/streets.png", kind: .spriteImage)]
    static let packResources = ([styleRef, tileJSONRef] + glyphs + sprites).sorted()

    static let sources = [
        SourceSummary(name: "streets", tileJSONURL: tileJSONURL, urlTemplate: template, scheme: "xyz",
                      minZoom: 0, maxZoom: 14, tileSize: 512),
        SourceSummary(name: "hillshade", tileJSONURL: nil, urlTemplate: "https://tiles.example.com/hillshade/{z}/{x}/{y}.png",
                      scheme: "tms", minZoom: 2, maxZoom: 12, tileSize: 256),
    ]

    /// What the sample style does: two tiled sources, a GeoJSON URL, an attribution-only source.
    static let overview = StyleOverview(
        sources: [
            StyleSourceSummary(name: "streets", type: "vector", fetch: .tiles, templateCount: 2,
                               zooms: [RegionZooms(region: "paris", zooms: 10...11), RegionZooms(region: "london", zooms: 10...11)]),
            StyleSourceSummary(name: "hillshade", type: "raster-dem", fetch: .tiles, templateCount: 1,
                               zooms: [RegionZooms(region: "paris", zooms: 11...12), RegionZooms(region: "london", zooms: nil)]),
            StyleSourceSummary(name: "points", type: "geojson", fetch: .resource("https://tiles.example.com/demo/points.geojson")),
            StyleSourceSummary(name: "attribution", type: "vector",
                               fetch: .skipped("it has neither \"url\" nor \"tiles\", so it names no tiles")),
        ],
        fontStacks: [["Noto Sans Regular", "Noto Sans CJK"]], glyphRangesPerStack: 3,
        glyphsTemplate: "https://tiles.example.com/demo/fonts/{fontstack}/{range}.pbf",
        sprites: ["https://tiles.example.com/demo/sprites/streets"])

    static func region(_ id: String, pack: String?, rowID: Int64?, action: PlanAction, zooms: [ZoomChange],
                       stale: [TileCount] = [], resources: ResourceChanges, bytes: Int64 = 0) -> RegionPlan {
        RegionPlan(regionID: id, name: id.capitalized, stylePackID: pack, rowID: rowID, action: action,
                   definition: Data(#"{"style_url":"\#(styleURL)"}"#.utf8), description: Data(#"{"name":"\#(id)"}"#.utf8),
                   area: .bbox(BoundingBox(west: 2.35, south: 48.83, east: 2.38, north: 48.86)), tileSets: [],
                   zoomChanges: zooms, staleTileCounts: stale, resources: resources, estimatedBytes: bytes)
    }

    /// A plan with a created, an updated and a kept row, and two removed rows (one the lock knows).
    static func plan(changes: Bool = true) -> Plan {
        let created = region("paris", pack: "streets", rowID: nil, action: .add,
                             zooms: [ZoomChange(urlTemplate: template, zoom: 10, counts: ChangeCounts(add: 1)),
                                     ZoomChange(urlTemplate: template, zoom: 11, counts: ChangeCounts(add: 4))],
                             resources: ResourceChanges(wanted: packResources, add: packResources, remove: []),
                             bytes: 125_000)
        let updated = region("london", pack: "streets", rowID: 2, action: .update,
                             zooms: [ZoomChange(urlTemplate: template, zoom: 10, counts: ChangeCounts(add: 2, keep: 1))],
                             stale: [TileCount(urlTemplate: template, zoom: 12, count: 5)],
                             resources: ResourceChanges(wanted: packResources, add: [], remove: ["https://old.example.com/style.json"]),
                             bytes: 50_000)
        let kept = region("berlin", pack: nil, rowID: 3, action: .keep,
                          zooms: [ZoomChange(urlTemplate: template, zoom: 10, counts: ChangeCounts(keep: 2)),
                                  ZoomChange(urlTemplate: template, zoom: 11, counts: ChangeCounts(keep: 6))],
                          resources: ResourceChanges(wanted: [tileJSONRef], add: [], remove: []))
        let pack = StylePackPlan(id: "streets", styleURL: styleURL, resources: packResources,
                                 missing: changes ? [styleRef, glyphs[0]] : [], sources: sources, overview: overview)
        var plan = Plan(jobName: "cities", jobDigest: jobDigest, epoch: 0,
                        regions: changes ? [created, updated, kept] : [kept],
                        removedRegions: changes ? [RemovedRegion(rowID: 7, key: "rome/streets", tileCount: 20, resourceCount: 3),
                                                   RemovedRegion(rowID: 9, key: nil, tileCount: 4, resourceCount: 0)] : [],
                        stylePacks: [pack], documents: [:], countsArePrecise: changes, assumedTileBytes: 25_000)
        plan.tilesToDownload = changes ? 7 : 0
        plan.bytesToDownload = changes ? 175_000 : 0
        plan.sharing = changes ? plannedSharing() : keptSharing()
        return plan
    }

    /// The store after the sample plan (members: 0 paris, 1 london, 2 berlin): paris's tiles
    /// and the style and one glyph range still to download (estimated), the rest stored.
    static func plannedSharing() -> ContentSharing {
        var sharing = ContentSharing()
        sharing.add([0], kind: .tile, count: 4, bytes: 100_000, estimated: true)
        sharing.add([0, 1], kind: .tile, count: 1, bytes: 25_000, estimated: true)
        sharing.add([1], kind: .tile, count: 1, bytes: 20_480)
        sharing.add([1], kind: .tile, count: 1, bytes: 25_000, estimated: true)
        sharing.add([2], kind: .tile, count: 8, bytes: 163_840)
        sharing.add([0, 1], kind: .style, bytes: 20_000, estimated: true)
        sharing.add([0, 1, 2], kind: .source, bytes: 1_200)
        sharing.add([0, 1], kind: .glyphs, bytes: 40_000, estimated: true)
        sharing.add([0, 1], kind: .glyphs, count: 2, bytes: 61_440)
        sharing.add([0, 1], kind: .spriteJSON, bytes: 4_096)
        sharing.add([0, 1], kind: .spriteImage, bytes: 51_200)
        return sharing
    }

    /// The store of the sample plan without changes: berlin alone, all stored.
    static func keptSharing() -> ContentSharing {
        var sharing = ContentSharing()
        sharing.add([0], kind: .tile, count: 8, bytes: 163_840)
        sharing.add([0], kind: .source, bytes: 1_200)
        return sharing
    }

    /// A store of rows 3 (berlin, no style pack), 4 (paris/streets) and 8 (a row no lock names):
    /// paris and berlin share a tile and the TileJSON, row 8 holds a tile of its own.
    static func storeSharing() -> ContentSharing {
        var sharing = ContentSharing()
        sharing.add([4], kind: .tile, count: 5, bytes: 102_400)
        sharing.add([3, 4], kind: .tile, count: 1, bytes: 20_480)
        sharing.add([3], kind: .tile, count: 1, bytes: 10_240)
        sharing.add([8], kind: .tile, count: 1, bytes: 2_048)
        sharing.add([3, 4], kind: .source, bytes: 1_200)
        sharing.add([4], kind: .style, bytes: 8_192)
        sharing.add([4], kind: .glyphs, count: 3, bytes: 92_160)
        sharing.add([4], kind: .spriteImage, bytes: 51_200)
        return sharing
    }

    /// The stored regions of `storeSharing`.
    static let storedRegions = [
        StoredRegion(rowID: 3, definition: Data(#"{"style_url":"\#(tileJSONURL)"}"#.utf8), description: nil),
        StoredRegion(rowID: 4, definition: Data(#"{"style_url":"\#(styleURL)"}"#.utf8), description: nil),
        StoredRegion(rowID: 8, definition: Data("not json".utf8), description: nil),
    ]

    /// The footprint of `storeSharing` as the sample lock names its rows.
    static func storeFootprint() -> Footprint {
        Footprint(sharing: storeSharing(), regions: storedRegions, lock: lock())
    }

    static func planDocument(changes: Bool = true, limits: Limits = Limits(maxTiles: 1_000, maxBytes: nil)) -> PlanDocument {
        PlanDocument(plan: plan(changes: changes), store: "./store", limits: limits)
    }

    /// An apply that ran out of luck and was stopped: of 1,573 planned downloads (13 resources),
    /// 295 were written, `failures` failed (two reasons), 30 tiles were missing upstream
    /// (`missingTiles: skip`) and the rest were not attempted; one region is incomplete.
    static func partialOutcome(failures: Int = 12, notAttempted: Int = 1_236) -> ApplyOutcome {
        var outcome = ApplyOutcome()
        outcome.missingTiles = 30
        outcome.downloaded = 295 + outcome.missingTiles
        outcome.attempted = outcome.downloaded + failures
        outcome.requested = outcome.attempted
        outcome.plannedResources = 13
        outcome.plannedTiles = outcome.attempted + notAttempted - 13
        outcome.stopped = notAttempted > 0
        outcome.bytesDownloaded = 512_345
        outcome.retries = 4
        for i in 0..<failures {
            outcome.recordFailure(url: "https://tiles.example.com/demo/tiles/streets/11/\(i)/0.pbf",
                                  reason: i % 3 == 0 ? "timeout" : "HTTP 500")
        }
        outcome.regionRows = ["paris/streets": 4, "london/streets": 2, "berlin/-": 3]
        outcome.incompleteRegions = ["paris/streets"]
        outcome.removedRegions = 2
        outcome.prunedTiles = 12
        outcome.prunedResources = 1
        outcome.seconds = 1.23456
        return outcome
    }

    /// An apply of one resource and one tile, with one retry, removing one region, one tile and
    /// one resource: every count in the text is singular.
    static func singularOutcome() -> ApplyOutcome {
        var outcome = ApplyOutcome()
        outcome.plannedResources = 1
        outcome.plannedTiles = 1
        outcome.attempted = 2
        outcome.requested = 2
        outcome.downloaded = 2
        outcome.bytesDownloaded = 2_048
        outcome.retries = 1
        outcome.regionRows = ["berlin/-": 3]
        outcome.removedRegions = 1
        outcome.prunedTiles = 1
        outcome.prunedResources = 1
        outcome.seconds = 0.5
        return outcome
    }

    /// A plan of one region with one tile and one resource to download, one removed region of
    /// one tile, and a style pack of one source and one font stack of one glyph range.
    static func singularPlan() -> Plan {
        let region = region("oslo", pack: "streets", rowID: nil, action: .add,
                            zooms: [ZoomChange(urlTemplate: template, zoom: 10, counts: ChangeCounts(add: 1))],
                            resources: ResourceChanges(wanted: [styleRef], add: [styleRef], remove: []), bytes: 25_000)
        let overview = StyleOverview(
            sources: [StyleSourceSummary(name: "streets", type: "vector", fetch: .tiles, templateCount: 1,
                                         zooms: [RegionZooms(region: "oslo", zooms: 10...10)])],
            fontStacks: [["Noto Sans Regular"]], glyphRangesPerStack: 1,
            glyphsTemplate: "https://tiles.example.com/demo/fonts/{fontstack}/{range}.pbf", sprites: [])
        let pack = StylePackPlan(id: "streets", styleURL: styleURL, resources: [styleRef], missing: [styleRef],
                                 sources: [sources[0]], overview: overview)
        var plan = Plan(jobName: "one", jobDigest: jobDigest, epoch: 0, regions: [region],
                        removedRegions: [RemovedRegion(rowID: 2, key: "rome/streets", tileCount: 1, resourceCount: 1)],
                        stylePacks: [pack], documents: [:], countsArePrecise: true, assumedTileBytes: 25_000)
        plan.notes = [PlanNote(subject: "region 'oslo'", message: "one note")]
        plan.refresh = RefreshPlan(before: 1_700_000_000, resources: 0, tiles: 1)
        plan.tilesToDownload = 1
        plan.bytesToDownload = 25_000
        var sharing = ContentSharing()
        sharing.add([0], kind: .tile, bytes: 25_000, estimated: true)
        sharing.add([0], kind: .style, bytes: 1_000)
        plan.sharing = sharing
        return plan
    }

    /// A lock of one complete region of one tile and one resource.
    static func singularLock() -> LockDocument {
        let pack = LockDocument.PackEntry(id: "streets", style: styleURL, styleDigest: digest("style"),
                                          sources: [sources[0]], tileJSONDigests: [tileJSONURL: digest(tileJSONURL)])
        let region = LockDocument.RegionEntry(key: "oslo/streets", regionID: "oslo", stylePack: "streets", rowID: 1,
                                              definitionDigest: digest("oslo"),
                                              expectedTiles: [TileCount(urlTemplate: template, zoom: 10, count: 1)],
                                              expectedResources: 1, isComplete: true)
        return LockDocument(jobName: "one", jobDigest: jobDigest, epoch: 1_700_000_000, stylePacks: [pack],
                            regions: [region], tileCount: 1, resourceCount: 1, byteCount: 2_048,
                            contentDigest: digest("content"))
    }

    static func lock(digestOrder: [String] = [tileJSONURL, "https://unused.example.com/x.json"]) -> LockDocument {
        var tileJSONDigests: [String: String] = [:]
        for url in digestOrder { tileJSONDigests[url] = digest(url) }
        let pack = LockDocument.PackEntry(id: "streets", style: styleURL, styleDigest: digest("style"),
                                          sources: sources, tileJSONDigests: tileJSONDigests)
        let regions = [
            LockDocument.RegionEntry(key: "paris/streets", regionID: "paris", stylePack: "streets", rowID: 4,
                                     definitionDigest: digest("paris"),
                                     expectedTiles: [TileCount(urlTemplate: template, zoom: 9, count: 1),
                                                     TileCount(urlTemplate: template, zoom: 10, count: 1),
                                                     TileCount(urlTemplate: template, zoom: 11, count: 4)],
                                     expectedResources: packResources.count, isComplete: false),
            LockDocument.RegionEntry(key: "berlin/-", regionID: "berlin", stylePack: nil, rowID: 3,
                                     definitionDigest: digest("berlin"),
                                     expectedTiles: [TileCount(urlTemplate: template, zoom: 10, count: 2)],
                                     expectedResources: 1, isComplete: true),
        ]
        return LockDocument(jobName: "cities", jobDigest: jobDigest, epoch: 1_700_000_000, stylePacks: [pack],
                            regions: regions, tileCount: 31, resourceCount: 9, byteCount: 812_000,
                            contentDigest: digest("content"))
    }

    /// A store with an integrity error, an incomplete region, a row the lock does not know, a
    /// lock region without a row and a stray file.
    static func auditWithProblems() -> AuditDocument {
        let regions = [
            AuditDocument.Region(rowID: 3, key: "berlin/-", definition: ["style_url": .string(styleURL), "min_zoom": 10.0],
                                 metadata: ["name": "Berlin"],
                                 zooms: [(template, 10, 2, 2)], expectedResources: 1, presentResources: 1),
            AuditDocument.Region(rowID: 4, key: "paris/streets", definition: ["style_url": .string(styleURL)],
                                 metadata: .null,
                                 zooms: [(template, 10, 1, 1), (template, 11, 4, 1)], expectedResources: 7, presentResources: 5),
            AuditDocument.Region(rowID: 8, key: nil, definition: "not json", metadata: .string("AAEC"),
                                 zooms: [(template, 5, nil, 1)], expectedResources: nil, presentResources: 0),
        ]
        var audit = AuditDocument(store: "./store", hasLock: true, integrity: ["row 3 missing from index tiles_idx"],
                                  regions: regions, tileCount: 40, resourceCount: 9, byteCount: 400_000, orphanTiles: 3,
                                  orphanResources: 1, unexpectedFiles: ["notes.txt"], missingRegions: ["rome/streets"])
        audit.footprint = storeFootprint()
        audit.sources = [
            AuditDocument.Source(name: "contours", template: "https://tiles.example.com/contours/{z}/{x}/{y}.pbf",
                                 pixelRatio: 1, tiles: 4, styleSources: []),
            AuditDocument.Source(name: "openmaptiles", template: template, pixelRatio: 1, tiles: 36,
                                 styleSources: ["streets: openmaptiles"]),
            AuditDocument.Source(name: "satellite@2x", template: "https://tiles.example.com/sat/{z}/{x}/{y}{ratio}.png",
                                 pixelRatio: 2, tiles: 1, styleSources: ["streets: satellite"]),
        ]
        return audit
    }

    /// A verified store of one tile and one resource where one row expired, one chunk differs
    /// and one tile is orphaned: every count in the text is singular.
    static func auditSingular() -> AuditDocument {
        var audit = AuditDocument(store: "./store", hasLock: true, integrity: [],
                                  regions: [AuditDocument.Region(rowID: 1, key: "oslo/streets",
                                                                 definition: ["style_url": .string(styleURL)],
                                                                 metadata: ["name": "Oslo"],
                                                                 zooms: [(template, 10, 1, 1)], expectedResources: 1,
                                                                 presentResources: 1)],
                                  tileCount: 1, resourceCount: 1, byteCount: 1_000, orphanTiles: 1, orphanResources: 0,
                                  unexpectedFiles: [], missingRegions: [])
        var verification = AuditDocument.Verification(checked: 1, corrupt: [], corruptCount: 0, expired: 1,
                                                      digestMatchesLock: false)
        verification.differingChunks = 1
        verification.differingRows = 1
        audit.verification = verification
        var sharing = ContentSharing()
        sharing.add([1], kind: .tile, bytes: 900)
        sharing.add([1], kind: .style, bytes: 100)
        audit.footprint = Footprint(sharing: sharing, regions: [StoredRegion(rowID: 1, definition: Data(), description: nil)],
                                    lock: singularLock())
        return audit
    }

    /// A store without a lock: nothing is expected, so nothing is missing.
    static func auditWithoutLock() -> AuditDocument {
        var audit = AuditDocument(store: "/data/store", hasLock: false, integrity: [],
                                  regions: [AuditDocument.Region(rowID: 1, key: nil, definition: ["style_url": .string(styleURL)],
                                                                 metadata: ["name": "x", "tags": ["a"]],
                                                                 zooms: [(template, 10, nil, 9)], expectedResources: nil,
                                                                 presentResources: 8)],
                                  tileCount: 9, resourceCount: 8, byteCount: 2_048, orphanTiles: 0, orphanResources: 0,
                                  unexpectedFiles: [], missingRegions: [])
        var sharing = ContentSharing()
        sharing.add([1], kind: .tile, count: 9, bytes: 1_024)
        sharing.add([1], kind: .glyphs, count: 8, bytes: 1_024)
        audit.footprint = Footprint(sharing: sharing, regions: [StoredRegion(rowID: 1, definition: Data(#"{"style_url":"\#(styleURL)"}"#.utf8),
                                                                             description: nil)], lock: nil)
        return audit
    }
}
