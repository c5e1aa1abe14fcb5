import Foundation
import PlaceIndex
import ProvisionFoundation
import ProvisionCodecs
import ProvisionModel
import TileMath

/// Builds a search pack's file (`search/<pack>.db` in the store) from the vector tiles the store
/// holds of the pack's sources, over the regions that name it.
///
/// Why two passes: the first reads only the stored rows and hashes them with the pack's settings
/// (the input digest); when it is the one the lock recorded and the file is the one written, the
/// second (decoding every tile, writing the file) is skipped, so a refresh that fetched the same
/// bytes again rebuilds nothing.
public enum SearchPackBuild {
    /// Rows read from the store at a time.
    static let page = 256

    /// What one pack's step did.
    public struct Outcome {
        /// What the lock records of the file now.
        public var record: SearchPackRecord
        /// Whether the file was written.
        public var built: Bool
        /// What the build read and skipped, per source summed (nil when nothing was built).
        public var findings: SearchPackFindings?
    }

    /// Brings `pack`'s file in `directory` (the store's) up to date with the tiles `store` holds:
    /// kept when its input digest and file are the ones `record` holds and the file is whole, else
    /// written anew, atomically, stamped with `buildTime` (Unix seconds): a failed build leaves the
    /// file it replaces (or none), never part of one.
    ///
    /// - Throws: `SearchPackError` when a source's schema is unknown and the pack has no mapping.
    public static func run(_ pack: SearchPackPlan, plan: Plan, store: StoredTiles, directory: URL, buildTime: Int64,
                           record: SearchPackRecord?) throws -> Outcome {
        let url = directory.appendingPathComponent(pack.pack.file)
        var hasher = SHA256()
        hasher.update(pack.settingsDigest + "\n")
        var tiles = 0
        for source in pack.sources {
            try forEachTile(of: source, pack: pack, plan: plan, store: store) { tile, content in
                tiles += 1
                hasher.update("\(source.urlTemplate) \(tile.z) \(tile.x) \(tile.y) \(content.compressed ? 1 : 0) ")
                hasher.update(SHA256.hex(content.data ?? Data()) + "\n")
            }
        }
        let inputDigest = "sha256:" + hasher.finalizeHex()
        // A file that cannot be read is not the one the lock records: it is built again.
        // Hashed in blocks, never held whole: a pack may be gigabytes.
        if let record, record.inputDigest == inputDigest, let file = try? SHA256.file(at: url),
           "sha256:" + file.hex == record.digest, PlaceIndexDatabase.problems(url).isEmpty {
            return Outcome(record: record, built: false, findings: nil)
        }
        let schemas = try self.schemas(of: pack)
        let attributions = pack.sources.map(\.attribution).filter { !$0.isEmpty }
        let metadata = PlaceIndexMetadata(
            pack: pack.pack.id, sources: pack.sources.map(\.name),
            attribution: attributions.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }.joined(separator: "; "),
            buildTime: rfc3339(buildTime), tileSchema: schemas.map(\.name).reduce(into: [String]()) {
                if !$0.contains($1) { $0.append($1) }
            }.joined(separator: ","), nameFields: pack.pack.names)
        var findings = SearchPackFindings(id: pack.pack.id)
        let count = try PlaceIndexDatabase.write(metadata: metadata, to: url) { add in
            findings = try entries(of: pack, schemas: schemas, plan: plan, store: store,
                                   sortDirectory: url.deletingLastPathComponent(), add)
        }
        let file = try SHA256.file(at: url)
        let written = SearchPackRecord(id: pack.pack.id, file: pack.pack.file, digest: "sha256:" + file.hex,
                                       inputDigest: inputDigest, settingsDigest: pack.settingsDigest, entries: count,
                                       bytes: file.bytes, tiles: tiles)
        return Outcome(record: written, built: true, findings: findings)
    }

    /// Each source's tile schema, in source order.
    ///
    /// - Throws: `SearchPackError` when a source's schema is unknown and the pack has no mapping.
    static func schemas(of pack: SearchPackPlan) throws -> [PlaceSchema] {
        try pack.sources.map { source in
            do {
                return try PlaceSchema.detect(vectorLayerIDs: source.vectorLayers ?? [], source: source.name,
                                              mapping: pack.pack.layers.map(SearchPackPlanning.layerRules))
            } catch {
                throw SearchPackError("search pack '\(pack.pack.id)': \(error)")
            }
        }
    }

    /// Hands `body` the entries of every source (one builder each, read with the source's schema
    /// of `schemas`: sources may differ in schema), in source order, each source's as its
    /// builder finishes, and returns what the builders read and skipped summed.
    /// Features read wait, sorted, in unlinked files in `sortDirectory` (the pack file's).
    static func entries(of pack: SearchPackPlan, schemas: [PlaceSchema], plan: Plan, store: StoredTiles,
                        sortDirectory: URL, _ body: (PlaceEntry) throws -> Void) throws -> SearchPackFindings {
        let regions = pack.regions.compactMap { id in
            plan.regions.first { $0.regionID == id }.map { PlaceRegion(id: id, area: $0.area) }
        }
        var total = SearchPackFindings(id: pack.pack.id)
        for (source, schema) in zip(pack.sources, schemas) {
            let builder = PlaceIndexBuilder(options: PlaceIndexOptions(schema: schema, nameFields: pack.pack.names,
                                                                       regions: regions, sortDirectory: sortDirectory))
            do {
                try forEachTile(of: source, pack: pack, plan: plan, store: store) { tile, content in
                    guard let payload = content.data, !payload.isEmpty else { return }
                    var data = content.compressed ? try Zlib.inflate(payload, framing: .zlibOrGzip) : payload
                    if Gzip.isGzip(data) { data = try Gzip.inflate(data) }
                    try builder.add(tile: tile, data: data)
                }
                let report = try builder.finish(body)
                total.add(report, source: source.name)
            } catch let error as ExternalSorter.FileError {
                throw StoreError.system(error.code, "search pack '\(pack.pack.id)' cannot \(error.operation) a temporary "
                                        + "sort file (the features read wait there, sorted)", path: error.directory)
            }
        }
        return total
    }

    /// Calls `body` with every tile the store holds of `source` inside the cover of a region of
    /// the pack (geographic z/x/y), each once, by zoom, then column, then row as stored.
    static func forEachTile(of source: SearchPackSource, pack: SearchPackPlan, plan: Plan, store: StoredTiles,
                            _ body: (TileID, StoredContent) throws -> Void) throws {
        var covers: [Int: [TileCover]] = [:]
        for row in plan.regions where pack.regions.contains(row.regionID) {
            for set in row.tileSets where set.urlTemplate == source.urlTemplate {
                for z in set.zooms { covers[z, default: []].append(set.cover(of: row.area, zoom: z)) }
            }
        }
        for z in covers.keys.sorted() {
            let zoomCovers = covers[z] ?? []
            try store.forEachTileRow(urlTemplate: source.urlTemplate, pixelRatio: source.pixelRatio, zoom: z, page: page) { stored in
                let t = stored.key.tile
                let tile = source.isTMS ? TileID(z: t.z, x: t.x, y: t.tmsY) : t
                if zoomCovers.contains(where: { $0.contains(tile) }) { try body(tile, stored.content) }
            }
        }
    }

    /// `seconds` (Unix) as RFC 3339 in UTC.
    static func rfc3339(_ seconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }
}

extension SearchPackFindings {
    /// Adds what one source's builder read and skipped.
    mutating func add(_ report: PlaceIndexReport, source: String) {
        tiles += report.tiles
        malformedTiles += report.malformedTiles.count
        features += report.features
        namedFeatures += report.namedFeatures
        brokenGeometry += report.brokenGeometry
        namesWithControlCharacters += report.namesWithControlCharacters
        namesTooLong += report.namesTooLong
        if !report.missingLayers.isEmpty { missingLayers.append(MissingLayers(source: source, layers: report.missingLayers)) }
    }
}
