import Foundation
import ProvisionFoundation
import ProvisionModel

/// The result of `provision audit` (Jobs/schema/audit.schema.json) and its text view.
public struct AuditDocument: Equatable, Sendable {
    /// Bumped on every change to the JSON shape (3: `sources`; 4: `footprint`; 5: `attribution`,
    /// `searchPacks`, `unknownSearchPackFiles`).
    public static let schemaVersion = 6

    /// One region row of the store.
    public struct Region: Equatable, Sendable {
        public var rowID: Int64
        /// The lock key, when the lock knows the row.
        public var key: String?
        public var definition: JSONValue
        public var metadata: JSONValue
        /// Per template and zoom: tiles the lock expects (nil without a lock) and tiles present.
        public var zooms: [(template: String, zoom: Int, expected: Int?, present: Int)]
        public var expectedResources: Int?
        public var presentResources: Int
        /// In a shard's store: the expected tile counts are the whole job's, of which the store
        /// holds one share, so a zoom short of them is not missing (the store's share is checked whole).
        public var isShardPart = false
        /// What `--verify` found among the rows this region links; nil when not verified.
        public var verification: RegionVerification?

        public init(rowID: Int64, key: String?, definition: JSONValue, metadata: JSONValue,
                    zooms: [(template: String, zoom: Int, expected: Int?, present: Int)],
                    expectedResources: Int?, presentResources: Int) {
            self.rowID = rowID
            self.key = key
            self.definition = definition
            self.metadata = metadata
            self.zooms = zooms
            self.expectedResources = expectedResources
            self.presentResources = presentResources
        }

        /// Whether the lock knows the row, everything it expects is present and `--verify` (when
        /// run) found none of its rows corrupt. A row no lock knows is never whole: what it
        /// should hold is unknown.
        public var isWhole: Bool { key != nil && !hasFindings }

        /// Whether something was found wrong with the row: tiles or resources the lock expects
        /// missing, or rows `--verify` found corrupt.
        public var hasFindings: Bool { !isComplete || !(verification?.isClean ?? true) }

        /// `✓` whole, `✗` something found wrong, `?` nothing found but no lock to compare with.
        public var mark: String { isWhole ? "✓" : hasFindings ? "✗" : "?" }

        /// Whether everything the lock expects is present.
        public var isComplete: Bool {
            (isShardPart || zooms.allSatisfy { z in z.expected.map { z.present >= $0 } ?? true })
                && (expectedResources.map { presentResources >= $0 } ?? true)
        }

        public static func == (a: Region, b: Region) -> Bool {
            a.rowID == b.rowID && a.key == b.key && a.definition == b.definition && a.metadata == b.metadata
                && a.zooms.elementsEqual(b.zooms) { $0.template == $1.template && $0.zoom == $1.zoom && $0.expected == $1.expected && $0.present == $1.present }
                && a.expectedResources == b.expectedResources && a.presentResources == b.presentResources
                && a.verification == b.verification
        }
    }

    /// One tileset of the store (a tile template and pixel ratio), with the name `export --source` takes.
    public struct Source: Equatable, Sendable {
        public var name: String
        public var template: String
        public var pixelRatio: Int
        /// Tiles with content.
        public var tiles: Int
        /// The style sources drawing from it, as `pack: source`; empty for a region's extra tileset.
        public var styleSources: [String]

        public init(name: String, template: String, pixelRatio: Int, tiles: Int, styleSources: [String]) {
            self.name = name
            self.template = template
            self.pixelRatio = pixelRatio
            self.tiles = tiles
            self.styleSources = styleSources
        }
    }

    public var store: String
    public var hasLock: Bool
    public var integrity: [String]
    public var regions: [Region]
    public var tileCount: Int
    public var resourceCount: Int
    public var byteCount: Int64
    public var orphanTiles: Int
    public var orphanResources: Int
    public var unexpectedFiles: [String]
    /// Lock regions with no row in the database.
    public var missingRegions: [String]
    /// Why `provision.lock.json` could not be read (it exists but does not parse or is not a
    /// lock this version reads); nil when it was read or is absent.
    public var lockProblem: String?
    /// Whether an apply left its work unfinished (its new database or its owner file is still there).
    public var interrupted = false
    /// The store's tilesets, by name.
    public var sources: [Source] = []
    /// The result of `--verify`, when asked for.
    public var verification: Verification?
    /// Differences from a job (`--manifest`), one sentence each; nil when not asked for.
    public var manifestDifferences: [String]?
    /// Per region its marginal and shared bytes, per style pack its resources; nil when not read.
    public var footprint: Footprint?
    /// For the store of a sharded apply: the share of the job's tiles it holds (the lock's `shard`).
    public var shard: LockDocument.ShardEntry?
    /// What the store's data must credit, as its lock records it (empty without a lock).
    public var attribution: [Attribution] = []
    /// The search packs the lock records, as checked, in the lock's order.
    public var searchPacks: [SearchPack] = []
    /// Files in the store's `search/` the lock records no pack of (paths in the store, sorted).
    public var unknownSearchPackFiles: [String] = []
    /// Whether `search/` holds files no readable lock says anything of (so none was checked).
    public var searchPackFilesUnchecked = false
    /// Why the packs were not rebuilt from the tiles and compared; nil when they were (or there are none).
    public var searchPackTilesNotChecked: String?
    /// The routing packs the lock records, as checked, in the lock's order.
    public var routingPacks: [RoutingPack] = []
    /// Files in the store's `routing/` the lock records no pack of (paths in the store, sorted).
    public var unknownRoutingPackFiles: [String] = []
    /// Whether `routing/` holds files no readable lock says anything of (so none was checked).
    public var routingPackFilesUnchecked = false

    /// What `audit --verify` found re-reading every row.
    public struct Verification: Equatable, Sendable {
        /// Rows read.
        public var checked: Int
        /// Rows whose payload is unreadable or implausible for its kind, with the reason (first 20).
        public var corrupt: [String]
        public var corruptCount: Int
        /// Rows whose expiry is in the past.
        public var expired: Int
        /// Whether the content digest equals the lock's; nil without a lock.
        public var digestMatchesLock: Bool?
        /// Chunks of rows whose digest differs from the lock's, and the rows in them not already
        /// counted corrupt (rows valid for their kind but not the ones the build wrote).
        public var differingChunks = 0
        public var differingRows = 0
        /// For `"glyphs": "used"` packs: whether every label's glyph ranges are stored; nil
        /// when the lock records no such pack.
        public var glyphs: GlyphCheck?
        /// The files whose bytes are not the ones the lock's `files` records.
        public var files: [FileMismatch] = []

        public init(checked: Int, corrupt: [String], corruptCount: Int, expired: Int, digestMatchesLock: Bool?) {
            self.checked = checked
            self.corrupt = corrupt
            self.corruptCount = corruptCount
            self.expired = expired
            self.digestMatchesLock = digestMatchesLock
        }
    }

    /// What `audit --verify` found checking the labels of `"glyphs": "used"` region rows.
    public struct GlyphCheck: Equatable, Sendable {
        /// Region rows checked.
        public var regions = 0
        /// Vector tiles whose labels were read.
        public var tilesRead = 0
        /// What is missing or could not be checked, one sentence each (first 20).
        public var problems: [String] = []
        public var problemCount = 0

        public init() {}

        /// Records a problem (keeping the first 20 sentences).
        public mutating func note(_ problem: String) {
            problemCount += 1
            if problems.count < 20 { problems.append(problem) }
        }
    }

    public init(store: String, hasLock: Bool, integrity: [String], regions: [Region], tileCount: Int,
                resourceCount: Int, byteCount: Int64, orphanTiles: Int, orphanResources: Int,
                unexpectedFiles: [String], missingRegions: [String]) {
        self.store = store
        self.hasLock = hasLock
        self.integrity = integrity
        self.regions = regions
        self.tileCount = tileCount
        self.resourceCount = resourceCount
        self.byteCount = byteCount
        self.orphanTiles = orphanTiles
        self.orphanResources = orphanResources
        self.unexpectedFiles = unexpectedFiles
        self.missingRegions = missingRegions
        verification = nil
        manifestDifferences = nil
    }

    /// Every problem found, one sentence each; empty when the store is whole.
    public var problems: [String] {
        var out = integrity.map { "integrity: \($0)" }
        if let lockProblem {
            out.append("provision.lock.json is unreadable (\(lockProblem)): expected counts and the digest cannot be checked; "
                       + "apply rewrites it")
        }
        if interrupted { out.append("an apply was interrupted (or is running); run apply to finish") }
        if let shard, tileCount < shard.tiles.count {
            out.append("shard \(shard.shard): \(grouped(shard.tiles.count - tileCount)) of its \(plural(shard.tiles.count, "tile")) missing")
        }
        for region in regions where region.presentResources == 0 && region.zooms.allSatisfy({ $0.present == 0 }) {
            out.append("region \(region.key ?? "row \(region.rowID)") holds no tiles or resources")
        }
        // A region the lock expects no tile for: its area lies outside its sources' bounds or its
        // zooms give none (the plan said why in a note). It holds resources only and draws nothing.
        for region in regions where region.key != nil && region.presentResources > 0
            && region.zooms.allSatisfy({ ($0.expected ?? 0) == 0 && $0.present == 0 }) {
            out.append("region \(region.key ?? "row \(region.rowID)") gets no tiles: its area and zooms give it none "
                       + "from its sources (outside their bounds or zooms; 'plan' names why), so it draws nothing offline")
        }
        for region in regions where !region.isComplete {
            let name = region.key ?? "row \(region.rowID)"
            for z in region.zooms {
                if let e = z.expected, z.present < e {
                    out.append("region \(name): \(grouped(e - z.present)) of \(plural(e, "tile")) missing at z\(z.zoom) (\(z.template))")
                }
            }
            if let e = region.expectedResources, region.presentResources < e {
                out.append("region \(name): \(grouped(e - region.presentResources)) of \(plural(e, "resource")) missing")
            }
        }
        out += missingRegions.map { "region \($0) is in the lock but not in offline.db" }
        out += unexpectedFiles.map { "unexpected file in the store: \($0)" }
        if let v = verification {
            out += v.corrupt.map { "corrupt: \($0)" }
            if v.corruptCount > v.corrupt.count {
                out.append("corrupt: … and \(plural(v.corruptCount - v.corrupt.count, "more row"))")
            }
            if v.expired > 0 {
                out.append("\(plural(v.expired, "row")) \(v.expired == 1 ? "has" : "have") expired "
                           + "(\(v.expired == 1 ? "its" : "their") Cache-Control/Expires time has passed)")
            }
            if v.differingChunks > 0 {
                out.append("\(plural(v.differingChunks, "chunk")) of rows \(v.differingChunks == 1 ? "differs" : "differ") "
                           + "from what the lock recorded (\(plural(v.differingRows, "more row")) to check); "
                           + "'apply --repair' fetches them again")
            }
            if v.digestMatchesLock == false { out.append("the content digest differs from the one the lock recorded") }
            out += v.files.map(\.problem)
            if let g = v.glyphs {
                out += g.problems.map { "glyphs: \($0)" }
                if g.problemCount > g.problems.count {
                    out.append("glyphs: … and \(plural(g.problemCount - g.problems.count, "more glyph problem"))")
                }
            }
            if orphanTiles + orphanResources > 0 {
                let orphans = listedCounts([(orphanTiles, "tile"), (orphanResources, "resource")])
                out.append("\(orphans.text) \(orphans.isSingular ? "is" : "are") orphaned (linked to no region)")
            }
        }
        out += searchPackProblems
        out += routingPackProblems
        out += (manifestDifferences ?? []).map { "differs from the job: \($0)" }
        return out
    }

    /// Whether no problem was found (exit 0); see `isWhole` for whether everything was checked.
    public var isOK: Bool { problems.isEmpty }

    /// The JSON document.
    public var json: JSONValue {
        var document: JSONValue = [
            "schemaVersion": .int(Self.schemaVersion),
            "kind": "audit",
            "store": .string(store),
            "ok": .bool(isOK),
            "whole": .bool(isWhole),
            "checked": .array(checked.map { .string($0.rawValue) }),
            "notChecked": .array(notChecked.map { ["check": .string($0.check.rawValue), "reason": .string($0.reason)] }),
            "hasLock": .bool(hasLock),
            "lockProblem": lockProblem.map { .string($0) } ?? .null,
            "interrupted": .bool(interrupted),
            "integrity": .string(integrity.isEmpty ? "ok" : integrity.joined(separator: "; ")),
            "totals": [
                "tiles": .int(tileCount), "resources": .int(resourceCount), "bytes": .int(Int(byteCount)),
                "orphanTiles": .int(orphanTiles), "orphanResources": .int(orphanResources),
            ],
            "regions": .array(regions.map { region in
                [
                    "rowId": .int(Int(region.rowID)),
                    "key": region.key.map { .string($0) } ?? .null,
                    "complete": .bool(region.isComplete),
                    "whole": .bool(region.isWhole),
                    "verification": region.verification.map { ["corrupt": .int($0.corrupt), "differing": .int($0.differing)] } ?? .null,
                    "definition": region.definition,
                    "metadata": region.metadata,
                    "zooms": .array(region.zooms.map {
                        ["template": .string($0.template), "zoom": .int($0.zoom),
                         "expected": $0.expected.map { .int($0) } ?? .null, "present": .int($0.present)]
                    }),
                    "resources": ["expected": region.expectedResources.map { .int($0) } ?? .null,
                                  "present": .int(region.presentResources)],
                ]
            }),
            "sources": .array(sources.map { source in
                ["name": .string(source.name), "template": .string(source.template), "pixelRatio": .int(source.pixelRatio),
                 "tiles": .int(source.tiles), "styleSources": .array(source.styleSources.map { .string($0) })]
            }),
            "verification": verification.map { v in
                ["checked": .int(v.checked), "corrupt": .int(v.corruptCount), "corruptRows": .array(v.corrupt.map { .string($0) }),
                 "expired": .int(v.expired), "digestMatchesLock": v.digestMatchesLock.map { .bool($0) } ?? .null,
                 "differingChunks": .int(v.differingChunks), "differingRows": .int(v.differingRows),
                 "glyphs": v.glyphs.map { g in
                     ["regions": .int(g.regions), "tilesRead": .int(g.tilesRead), "missing": .int(g.problemCount),
                      "problems": .array(g.problems.map { .string($0) })]
                 } ?? .null]
            } ?? .null,
            "manifestDifferences": manifestDifferences.map { .array($0.map { .string($0) }) } ?? .null,
            "problems": .array(problems.map { .string($0) }),
            "footprint": footprint?.json ?? .null,
            "attribution": .array(attribution.map(\.json)),
            "searchPacks": searchPacksJSON,
            "unknownSearchPackFiles": .array(unknownSearchPackFiles.map { .string($0) }),
            "routingPacks": routingPacksJSON,
            "unknownRoutingPackFiles": .array(unknownRoutingPackFiles.map { .string($0) }),
        ]
        // Only a shard's store has it.
        if let shard, case .object(var object) = document {
            object["shard"] = shard.json
            document = .object(object)
        }
        return document
    }

    /// The text view.
    public var text: String {
        var out = "Store \(store): \(plural(tileCount, "tile")), \(plural(resourceCount, "resource")), "
            + "\(ByteFormat.string(byteCount))\n"
        out += "Integrity: \(integrity.isEmpty ? "ok" : integrity.joined(separator: "; "))\n"
        if let shard {
            out += "Shard \(shard.shard) of a sharded apply: a partial store holding tiles \(grouped(shard.tiles.lowerBound))–"
                + "\(grouped(max(shard.tiles.lowerBound, shard.tiles.upperBound - 1))) of the job's \(grouped(shard.totalTiles)) "
                + "(\(plural(shard.tiles.count, "tile"))); the counts per zoom below are the whole job's, and the other "
                + "shards hold the rest ('provision merge' joins them).\n"
        }
        if !hasLock && lockProblem == nil {
            out += "No provision.lock.json: expected counts are unknown; reporting what is present.\n"
        }
        for region in regions {
            let name = region.key ?? "row \(region.rowID)"
            let meta = region.metadata.serialized(.compact)
            out += "\n\(region.mark) region \(name) \(meta)\n"
            for z in region.zooms {
                let expected = z.expected.map { grouped($0) } ?? "?"
                out += "    z\(z.zoom < 10 ? " " : "")\(z.zoom) \(grouped(z.present))/\(expected) \(z.expected == 1 ? "tile" : "tiles")\n"
            }
            let resources = region.expectedResources.map { grouped($0) } ?? "?"
            out += "    resources \(grouped(region.presentResources))/\(resources)\n"
            if let v = region.verification, !v.isClean {
                let found = [v.corrupt > 0 ? plural(v.corrupt, "corrupt row") : "",
                             v.differing > 0 ? "\(plural(v.differing, "row")) in chunks that differ from the lock (suspect)" : ""]
                out += "    verify: \(listed(found))\n"
            }
        }
        if !sources.isEmpty {
            out += "\nSources (the names 'export --source' takes):\n"
            for source in sources {
                let drawn = source.styleSources.isEmpty ? "a region's tileset" : source.styleSources.joined(separator: ", ")
                out += "    \(source.name): \(plural(source.tiles, "tile")), \(source.template)"
                    + "\(source.pixelRatio > 1 ? " @\(source.pixelRatio)x" : "") (\(drawn))\n"
            }
        }
        if let footprint { out += "\n" + FootprintRenderer.text(footprint, title: "Bytes in offline.db") }
        out += searchPacksText
        out += routingPacksText
        if orphanTiles + orphanResources > 0 {
            let orphans = listedCounts([(orphanTiles, "tile"), (orphanResources, "resource")])
            out += "\n\(orphans.text) \(orphans.isSingular ? "belongs" : "belong") to no region (ambient).\n"
        }
        if let v = verification {
            out += "\nVerified \(plural(v.checked, "row")): \(grouped(v.corruptCount)) corrupt, \(grouped(v.expired)) expired"
            out += v.digestMatchesLock.map { $0 ? ", content digest matches the lock.\n" : ", content digest DIFFERS from the lock.\n" } ?? ".\n"
            if let g = v.glyphs {
                out += "Labels of \(plural(g.tilesRead, "tile")) in \(plural(g.regions, "region")) with glyphs \"used\": "
                out += g.problemCount == 0 ? "every glyph range stored.\n" : "\(plural(g.problemCount, "problem")).\n"
            }
        }
        let problems = self.problems
        out += "\nChecked: \(listed(checked.map(\.text))).\n"
        if let notCheckedText { out += notCheckedText + "\n" }
        if !problems.isEmpty {
            out += "\n\(plural(problems.count, "problem")):\n" + problems.map { "  - \($0)\n" }.joined()
        } else if isWhole {
            out += "\nOK: the store is whole.\n"
        } else {
            out += "\nOK: no problems found in what was checked (see 'Not checked' above).\n"
        }
        return out
    }
}
