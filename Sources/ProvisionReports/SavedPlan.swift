import Foundation
import ProvisionFoundation
import ProvisionModel
import TileMath

/// A plan saved by `provision plan --out FILE` and carried out by `provision apply FILE`.
///
/// It holds the whole plan (desired rows with their areas and tile sets, the style and TileJSON
/// bytes it was resolved from, the diff) plus what it was computed against: the job file's path
/// and digest and a digest of the store's files. Apply refuses a plan whose job or store changed
/// since, as Terraform refuses a stale plan.
public struct SavedPlan: Sendable {
    /// Bumped on every change to the file's shape (3: `shard`, which an older version would
    /// ignore and apply the whole job).
    public static let schemaVersion = 3
    /// The `kind` that tells a saved plan from a job file.
    public static let kind = "saved-plan"

    public var plan: Plan
    /// The job file path as given to `plan`, and resolved to an absolute path.
    public var jobPath: String
    /// The store directory, absolute.
    public var storePath: String
    /// `StoreState.digest` of the store when planned.
    public var storeDigest: String
    /// The shard the plan was made for (`plan --shard I/N --out`): its apply holds that share
    /// only, and `apply PLAN --shard` with another one is refused. Nil: the whole job.
    public var shard: Shard? { plan.shard?.shard ?? savedShard }
    /// The shard read from the file (its counts are computed again by the apply).
    private var savedShard: Shard?

    public init(plan: Plan, jobPath: String, storePath: String, storeDigest: String) {
        self.plan = plan
        self.jobPath = jobPath
        self.storePath = storePath
        self.storeDigest = storeDigest
    }

    /// Whether `json` looks like a saved plan (rather than a job file).
    public static func isSavedPlan(_ json: JSONValue) -> Bool {
        json["kind"]?.stringValue == kind
    }

    // MARK: - Writing

    /// The JSON document.
    public var json: JSONValue {
        [
            "schemaVersion": .int(Self.schemaVersion),
            "kind": .string(Self.kind),
            "job": ["path": .string(jobPath), "name": .string(plan.jobName), "digest": .string(plan.jobDigest)],
            "store": ["path": .string(storePath), "digest": .string(storeDigest)],
            "epoch": .int(Int(plan.epoch)),
            "shard": shard.map { ["index": .int($0.index), "count": .int($0.count)] } ?? .null,
            "countsArePrecise": .bool(plan.countsArePrecise),
            "assumedTileBytes": .int(plan.assumedTileBytes),
            "tilesToDownload": .int(plan.tilesToDownload),
            "bytesToDownload": .int(Int(plan.bytesToDownload)),
            "regions": .array(plan.regions.map(Self.regionJSON)),
            "removedRegions": .array(plan.removedRegions.map {
                ["rowId": .int(Int($0.rowID)), "key": $0.key.map { .string($0) } ?? .null,
                 "tiles": .int($0.tileCount), "resources": .int($0.resourceCount)]
            }),
            "stylePacks": .array(plan.stylePacks.map { pack in
                ["id": .string(pack.id), "style": .string(pack.styleURL),
                 "resources": .array(pack.resources.map(Self.refJSON)),
                 "missing": .array(pack.missing.map(Self.refJSON)),
                 "sources": .array(pack.sources.map(sourceJSON)),
                 "glyphs": .string(pack.glyphPolicy.rawValue),
                 "glyphDemand": pack.glyphDemand?.json ?? .null]
            }),
            "refetchTemplates": .array(plan.refetchTemplates.map { .string($0) }),
            "refresh": plan.refresh.map { ["before": .int(Int($0.before)), "resources": .int($0.resources), "tiles": .int($0.tiles)] } ?? .null,
            "documents": .object(JSONObject(plan.documents.sorted { $0.key < $1.key }.map { url, body in
                (url, ["data": .string(body.data.base64EncodedString()), "etag": body.etag.map { .string($0) } ?? .null,
                       "modified": body.modified.map { .int(Int($0)) } ?? .null,
                       "expires": body.expires.map { .int(Int($0)) } ?? .null])
            })),
        ]
    }

    static func refJSON(_ ref: ResourceRef) -> JSONValue { ["url": .string(ref.url), "kind": .int(ref.kind.rawValue)] }

    static func regionJSON(_ region: RegionPlan) -> JSONValue {
        [
            "regionId": .string(region.regionID),
            "name": .string(region.name),
            "stylePack": region.stylePackID.map { .string($0) } ?? .null,
            "rowId": region.rowID.map { .int(Int($0)) } ?? .null,
            "action": .string(region.action.rawValue),
            "definition": .string(String(decoding: region.definition, as: UTF8.self)),
            "description": .string(region.description.base64EncodedString()),
            "area": areaJSON(region.area),
            "tileSets": .array(region.tileSets.map(tileSetJSON)),
            "zoomChanges": .array(region.zoomChanges.map {
                ["template": .string($0.urlTemplate), "zoom": .int($0.zoom), "add": .int($0.counts.add),
                 "remove": .int($0.counts.remove), "keep": .int($0.counts.keep)]
            }),
            "staleTiles": .array(region.staleTileCounts.map {
                ["template": .string($0.urlTemplate), "zoom": .int($0.zoom), "count": .int($0.count)]
            }),
            "resources": [
                "wanted": .array(region.resources.wanted.map(refJSON)),
                "add": .array(region.resources.add.map(refJSON)),
                "remove": .array(region.resources.remove.map { .string($0) }),
            ],
            "estimatedBytes": .int(Int(region.estimatedBytes)),
            "glyphsAtApply": .bool(region.glyphsAtApply),
        ]
    }

    /// One planned tile set (read back by `tileSet(_:at:)`).
    static func tileSetJSON(_ set: PlannedTileSet) -> JSONValue {
        ["template": .string(set.urlTemplate), "pixelRatio": .int(set.pixelRatio), "tms": .bool(set.isTMS),
         "minZoom": .int(set.zooms.lowerBound), "maxZoom": .int(set.zooms.upperBound), "kind": .int(set.kind.rawValue),
         "bounds": set.bounds.map { b in .array([b.west, b.south, b.east, b.north].map { .double($0) }) } ?? .null]
    }

    static func areaJSON(_ area: CoverArea) -> JSONValue {
        switch area {
        case .bbox(let b):
            return ["bbox": .array([b.west, b.south, b.east, b.north].map { .double($0) })]
        case .polygons(let polygons):
            return ["polygons": .array(polygons.map { polygon in .array(polygon.rings.map(positionsJSON)) })]
        case .paths(let lines, let points):
            return ["lines": .array(lines.map(positionsJSON)), "points": positionsJSON(points)]
        }
    }

    static func positionsJSON(_ positions: [LngLat]) -> JSONValue {
        .array(positions.map { .array([.double($0.lng), .double($0.lat)]) })
    }

    static func positions(_ json: JSONValue?) -> [LngLat] {
        (json?.arrayValue ?? []).compactMap { p in
            guard let c = p.arrayValue?.compactMap(\.doubleValue), c.count == 2 else { return nil }
            return LngLat(lng: c[0], lat: c[1])
        }
    }

    // MARK: - Reading

    /// Why a file could not be read as a saved plan.
    public struct FormatError: Error, CustomStringConvertible {
        public var pointer: String
        public var message: String
        public var description: String { "\(pointer): \(message)" }
    }

    /// Reads a saved plan document.
    public init(json: JSONValue) throws(FormatError) {
        guard json["kind"]?.stringValue == Self.kind else { throw Self.fail("/kind", "expected \"\(Self.kind)\"") }
        guard json["schemaVersion"]?.intValue == Self.schemaVersion else {
            throw Self.fail("/schemaVersion", "expected \(Self.schemaVersion): this plan was written by another version of provision")
        }
        guard let jobPath = json["job"]?["path"]?.stringValue, let jobName = json["job"]?["name"]?.stringValue,
              let jobDigest = json["job"]?["digest"]?.stringValue else { throw Self.fail("/job", "expected path, name and digest") }
        guard let storePath = json["store"]?["path"]?.stringValue, let storeDigest = json["store"]?["digest"]?.stringValue else {
            throw Self.fail("/store", "expected path and digest")
        }
        guard let epoch = json["epoch"]?.intValue else { throw Self.fail("/epoch", "expected an integer") }
        var regions: [RegionPlan] = []
        for (i, r) in (json["regions"]?.arrayValue ?? []).enumerated() { regions.append(try Self.region(r, at: "/regions/\(i)")) }
        let removed = (json["removedRegions"]?.arrayValue ?? []).compactMap { r -> RemovedRegion? in
            guard let row = r["rowId"]?.intValue else { return nil }
            return RemovedRegion(rowID: Int64(row), key: r["key"]?.stringValue, tileCount: r["tiles"]?.intValue ?? 0,
                                 resourceCount: r["resources"]?.intValue ?? 0)
        }
        var packs: [StylePackPlan] = []
        for (i, pack) in (json["stylePacks"]?.arrayValue ?? []).enumerated() { packs.append(try Self.pack(pack, at: "/stylePacks/\(i)")) }
        var documents: [String: FetchedBody] = [:]
        for (url, d) in json["documents"]?.objectValue?.members ?? [] {
            guard let data = d["data"]?.stringValue.flatMap({ Data(base64Encoded: $0) }) else {
                throw Self.fail("/documents", "expected base64 data for \(url)")
            }
            documents[url] = FetchedBody(data: data, etag: d["etag"]?.stringValue, modified: d["modified"]?.intValue.map(Int64.init),
                                         expires: d["expires"]?.intValue.map(Int64.init))
        }
        var plan = Plan(jobName: jobName, jobDigest: jobDigest, epoch: Int64(epoch), regions: regions, removedRegions: removed,
                        stylePacks: packs, documents: documents, countsArePrecise: json["countsArePrecise"] != .bool(false),
                        assumedTileBytes: json["assumedTileBytes"]?.intValue ?? 15_000)
        plan.refetchTemplates = (json["refetchTemplates"]?.arrayValue ?? []).compactMap(\.stringValue)
        if let refresh = json["refresh"], let before = refresh["before"]?.intValue {
            plan.refresh = RefreshPlan(before: Int64(before), resources: refresh["resources"]?.intValue ?? 0,
                                       tiles: refresh["tiles"]?.intValue ?? 0)
        }
        plan.tilesToDownload = json["tilesToDownload"]?.intValue ?? 0
        plan.bytesToDownload = Int64(json["bytesToDownload"]?.intValue ?? 0)
        self.init(plan: plan, jobPath: jobPath, storePath: storePath, storeDigest: storeDigest)
        if let shard = json["shard"], shard != .null {
            guard let index = shard["index"]?.intValue, let count = shard["count"]?.intValue, count >= 1, index >= 0, index < count else {
                throw Self.fail("/shard", "expected {index, count} with 0 ≤ index < count, or null")
            }
            savedShard = Shard(index: index, count: count)
        }
    }

    private static func fail(_ pointer: String, _ message: String) -> FormatError { FormatError(pointer: pointer, message: message) }

    /// A list of resources `{url, kind}` at `pointer`.
    private static func refs(_ value: JSONValue?, _ pointer: String) throws(FormatError) -> [ResourceRef] {
        var out: [ResourceRef] = []
        for (i, item) in (value?.arrayValue ?? []).enumerated() {
            guard let url = item["url"]?.stringValue, let raw = item["kind"]?.intValue, let kind = ResourceKind(rawValue: raw) else {
                throw fail("\(pointer)/\(i)", "expected a resource {url, kind}")
            }
            out.append(ResourceRef(url: url, kind: kind))
        }
        return out
    }

    /// One region plan at `p`.
    private static func region(_ r: JSONValue, at p: String) throws(FormatError) -> RegionPlan {
        guard let id = r["regionId"]?.stringValue, let name = r["name"]?.stringValue,
              let actionText = r["action"]?.stringValue, let action = PlanAction(rawValue: actionText),
              let definition = r["definition"]?.stringValue,
              let description = r["description"]?.stringValue.flatMap({ Data(base64Encoded: $0) }),
              let area = r["area"].flatMap(Self.area(from:)) else {
            throw fail(p, "expected a region plan with regionId, name, action, definition, description and area")
        }
        var tileSets: [PlannedTileSet] = []
        for (j, t) in (r["tileSets"]?.arrayValue ?? []).enumerated() { tileSets.append(try tileSet(t, at: "\(p)/tileSets/\(j)")) }
        let zoomChanges = (r["zoomChanges"]?.arrayValue ?? []).compactMap { z -> ZoomChange? in
            guard let template = z["template"]?.stringValue, let zoom = z["zoom"]?.intValue else { return nil }
            return ZoomChange(urlTemplate: template, zoom: zoom, counts: ChangeCounts(
                add: z["add"]?.intValue ?? 0, remove: z["remove"]?.intValue ?? 0, keep: z["keep"]?.intValue ?? 0))
        }
        let stale = (r["staleTiles"]?.arrayValue ?? []).compactMap { s -> TileCount? in
            guard let template = s["template"]?.stringValue, let zoom = s["zoom"]?.intValue,
                  let count = s["count"]?.intValue else { return nil }
            return TileCount(urlTemplate: template, zoom: zoom, count: count)
        }
        let resources = ResourceChanges(
            wanted: try refs(r["resources"]?["wanted"], "\(p)/resources/wanted"),
            add: try refs(r["resources"]?["add"], "\(p)/resources/add"),
            remove: (r["resources"]?["remove"]?.arrayValue ?? []).compactMap(\.stringValue))
        var row = RegionPlan(
            regionID: id, name: name, stylePackID: r["stylePack"]?.stringValue,
            rowID: r["rowId"]?.intValue.map(Int64.init), action: action, definition: Data(definition.utf8),
            description: description, area: area, tileSets: tileSets, zoomChanges: zoomChanges,
            staleTileCounts: stale, resources: resources, estimatedBytes: Int64(r["estimatedBytes"]?.intValue ?? 0))
        row.glyphsAtApply = r["glyphsAtApply"] == .bool(true)
        return row
    }

    /// One planned tile set at `pointer`.
    static func tileSet(_ t: JSONValue, at pointer: String) throws(FormatError) -> PlannedTileSet {
        guard let template = t["template"]?.stringValue, let ratio = t["pixelRatio"]?.intValue,
              let minZ = t["minZoom"]?.intValue, let maxZ = t["maxZoom"]?.intValue, minZ <= maxZ,
              let kind = t["kind"]?.intValue.flatMap(ResourceKind.init(rawValue:)) else {
            throw fail(pointer, "expected a tile set")
        }
        var bounds: TileBounds?
        if let edges = t["bounds"]?.arrayValue {
            let values = edges.compactMap(\.doubleValue)
            guard values.count == 4, let read = TileBounds(west: values[0], south: values[1], east: values[2],
                                                           north: values[3]) else {
                throw fail("\(pointer)/bounds", "expected tile set bounds [west, south, east, north]")
            }
            bounds = read
        }
        return PlannedTileSet(urlTemplate: template, pixelRatio: ratio, isTMS: t["tms"] == .bool(true),
                              zooms: minZ...maxZ, kind: kind, bounds: bounds)
    }

    /// One style pack plan at `pointer`.
    private static func pack(_ pack: JSONValue, at pointer: String) throws(FormatError) -> StylePackPlan {
        guard let id = pack["id"]?.stringValue, let style = pack["style"]?.stringValue else {
            throw fail(pointer, "expected id and style")
        }
        let sources = (pack["sources"]?.arrayValue ?? []).compactMap { s -> SourceSummary? in
            guard let name = s["name"]?.stringValue, let template = s["template"]?.stringValue else { return nil }
            return SourceSummary(name: name, tileJSONURL: s["tileJSON"]?.stringValue, urlTemplate: template,
                                 scheme: s["scheme"]?.stringValue ?? "xyz", minZoom: s["minzoom"]?.intValue ?? 0,
                                 maxZoom: s["maxzoom"]?.intValue ?? 22, tileSize: s["tileSize"]?.intValue ?? 512)
        }
        var plan = StylePackPlan(id: id, styleURL: style, resources: try refs(pack["resources"], "\(pointer)/resources"),
                                 missing: try refs(pack["missing"], "\(pointer)/missing"), sources: sources)
        plan.glyphPolicy = pack["glyphs"]?.stringValue.flatMap(GlyphPolicy.init(rawValue:)) ?? .ideographsLocal
        if let demand = pack["glyphDemand"], demand != .null {
            guard let read = GlyphDemand(json: demand) else { throw fail("\(pointer)/glyphDemand", "expected a glyph demand") }
            plan.glyphDemand = read
        }
        return plan
    }

    static func area(from json: JSONValue) -> CoverArea? {
        if let b = json["bbox"]?.arrayValue?.compactMap(\.doubleValue), b.count == 4 {
            return .bbox(BoundingBox(west: b[0], south: b[1], east: b[2], north: b[3]))
        }
        if let lines = json["lines"]?.arrayValue {
            return .paths(lines: lines.map(positions), points: positions(json["points"]))
        }
        guard let polygons = json["polygons"]?.arrayValue else { return nil }
        return .polygons(polygons.map { polygon in Polygon(rings: (polygon.arrayValue ?? []).map(positions)) })
    }
}
