import Foundation
import ProvisionModel
import TileMath

/// An in-memory `StoreInventory` and `StoreWriter` with the semantics of `OfflineDatabase` (the offline database):
///
/// - region rows get increasing row ids that are never reused (`AUTOINCREMENT`);
/// - tiles are keyed by (url_template, pixel_ratio, z, x, y) and resources by URL, and a write
///   replaces an equal key in place, so existing links survive a refresh;
/// - links are sets (`INSERT OR IGNORE`), only stored content can be linked, linking to an
///   unknown row throws, deleting a row drops its links (`ON DELETE CASCADE`) and leaves content
///   for `pruneOrphans`;
/// - `forEachStoredTile` visits one column's stored rows ascending (with a region, those linked
///   to it), text is ordered by UTF-8 bytes (SQLite's BINARY collation).
///
/// One difference: sizes (`meanTileSizes`, `forEachStoredTileLength`, `storedResourceSizes` …)
/// are raw payload sizes, where the database measures the stored (possibly zlib-compressed)
/// bytes; tests that depend on them use incompressible payloads or only compare relative sizes.
final class InMemoryStore: StoreInventory, StoreWriter {
    /// What a missing row or an invalid write raises.
    enum Failure: Error, Equatable {
        case noSuchRegion(Int64)
        case tileWithoutKey(String)
    }

    private struct Row {
        var definition: Data
        var description: Data?
        var tiles: Set<TileKey> = []
        var resources: Set<String> = []
    }

    private var rows: [Int64: Row] = [:]
    private var lastRowID: Int64 = 0
    /// Stored tiles and their payloads.
    private(set) var tiles: [TileKey: Data] = [:]
    /// Stored resources with their kind and payload.
    private(set) var resources: [String: (kind: ResourceKind, data: Data)] = [:]
    /// How many times `write` was called, to check that a plan never writes.
    private(set) var writeCount = 0
    /// How many times `linkedTileCounts` was called (the join a database runs over every link).
    private(set) var linkedTileCountsReads = 0

    init() {}

    // MARK: Regions

    func regions() throws -> [StoredRegion] {
        rows.keys.sorted().compactMap { id in
            rows[id].map { StoredRegion(rowID: id, definition: $0.definition, description: $0.description) }
        }
    }

    func insertRegion(definition: Data, description: Data?) throws -> Int64 {
        lastRowID += 1
        rows[lastRowID] = Row(definition: definition, description: description)
        return lastRowID
    }

    func updateRegion(_ rowID: Int64, definition: Data, description: Data?) throws {
        guard rows[rowID] != nil else { throw Failure.noSuchRegion(rowID) }
        rows[rowID]?.definition = definition
        rows[rowID]?.description = description
    }

    func deleteRegions(_ rowIDs: [Int64]) throws {
        for id in rowIDs { rows[id] = nil }
    }

    func pruneOrphans() throws -> (tiles: Int, resources: Int) {
        let linkedTiles = rows.values.reduce(into: Set<TileKey>()) { $0.formUnion($1.tiles) }
        let linkedResources = rows.values.reduce(into: Set<String>()) { $0.formUnion($1.resources) }
        let orphanTiles = tiles.keys.filter { !linkedTiles.contains($0) }
        let orphanResources = resources.keys.filter { !linkedResources.contains($0) }
        for key in orphanTiles { tiles[key] = nil }
        for url in orphanResources { resources[url] = nil }
        return (orphanTiles.count, orphanResources.count)
    }

    // MARK: Content

    func forEachStoredTile(in column: StoredTileColumn, linkedTo region: Int64?, _ body: (_ y: Int) throws -> Void) throws {
        let keys = region.map { rows[$0]?.tiles ?? [] } ?? Set(tiles.keys)
        let ys = keys.filter {
            $0.urlTemplate == column.urlTemplate && $0.pixelRatio == column.pixelRatio && $0.tile.z == column.zoom
                && $0.tile.x == column.x && column.rows.contains($0.tile.y)
        }.map(\.tile.y)
        for y in ys.sorted() { try body(y) }
    }

    func storedResources(among urls: [String]) throws -> Set<String> {
        Set(urls.filter { resources[$0] != nil })
    }

    func resourceData(url: String) throws -> Data? {
        resources[url]?.data
    }

    func write(_ items: [FetchedItem]) throws {
        writeCount += 1
        for item in items {
            if item.request.kind == .tile || item.request.tileKey != nil {
                guard let key = item.request.tileKey else { throw Failure.tileWithoutKey(item.request.url) }
                tiles[key] = item.body.data
            } else {
                resources[item.request.url] = (item.request.kind, item.body.data)
            }
        }
    }

    // MARK: Links

    @discardableResult
    func linkTiles(_ keys: [TileKey], toRegion rowID: Int64) throws -> Int {
        guard var row = rows[rowID] else { throw Failure.noSuchRegion(rowID) }
        var added = 0
        for key in keys where tiles[key] != nil && row.tiles.insert(key).inserted { added += 1 }
        rows[rowID] = row
        return added
    }

    func unlinkTiles(_ keys: [TileKey], fromRegion rowID: Int64) throws {
        for key in keys { rows[rowID]?.tiles.remove(key) }
    }

    func linkResources(_ urls: [String], toRegion rowID: Int64) throws {
        guard var row = rows[rowID] else { throw Failure.noSuchRegion(rowID) }
        for url in urls where resources[url] != nil { row.resources.insert(url) }
        rows[rowID] = row
    }

    func unlinkResources(fromRegion rowID: Int64, keeping urls: Set<String>) throws {
        guard let row = rows[rowID] else { return }
        rows[rowID]?.resources = row.resources.filter { urls.contains($0) }
    }

    func linkedTileCounts(region rowID: Int64) throws -> [TileCount] {
        linkedTileCountsReads += 1
        guard let row = rows[rowID] else { return [] }
        var counts: [String: TileCount] = [:]
        for key in row.tiles {
            counts["\(key.urlTemplate)\u{0}\(key.tile.z)", default: TileCount(urlTemplate: key.urlTemplate, zoom: key.tile.z,
                                                                            count: 0)].count += 1
        }
        return counts.values.sorted {
            $0.urlTemplate == $1.urlTemplate
                ? $0.zoom < $1.zoom
                : InMemoryStore.bytesAscending($0.urlTemplate, $1.urlTemplate)
        }
    }

    func tileLinkCount(region rowID: Int64) throws -> Int {
        rows[rowID]?.tiles.count ?? 0
    }

    func linkedResources(region rowID: Int64) throws -> [String] {
        guard let row = rows[rowID] else { return [] }
        return row.resources.sorted(by: InMemoryStore.bytesAscending)
    }

    func meanTileSizes(urlTemplate: String, zooms: ClosedRange<Int>) throws -> [Int: Double] {
        let byZoom = Dictionary(grouping: tiles.filter { $0.key.urlTemplate == urlTemplate && zooms.contains($0.key.tile.z) }) {
            $0.key.tile.z
        }
        return byZoom.mapValues { rows in Double(rows.reduce(0) { $0 + $1.value.count }) / Double(rows.count) }
    }

    func forEachStoredTileLength(in column: StoredTileColumn, _ body: (_ y: Int, _ bytes: Int64) throws -> Void) throws {
        let stored = tiles.filter {
            $0.key.urlTemplate == column.urlTemplate && $0.key.pixelRatio == column.pixelRatio && $0.key.tile.z == column.zoom
                && $0.key.tile.x == column.x && column.rows.contains($0.key.tile.y)
        }
        for (key, data) in stored.sorted(by: { $0.key.tile.y < $1.key.tile.y }) { try body(key.tile.y, Int64(data.count)) }
    }

    func storedResourceSizes(among urls: [String]) throws -> [String: Int64] {
        var sizes: [String: Int64] = [:]
        for url in urls { if let stored = resources[url] { sizes[url] = Int64(stored.data.count) } }
        return sizes
    }

    func meanResourceSize(kind: ResourceKind) throws -> Double? {
        let sizes = resources.values.filter { $0.kind == kind }.map(\.data.count)
        guard !sizes.isEmpty else { return nil }
        return Double(sizes.reduce(0, +)) / Double(sizes.count)
    }

    func tileRows(urlTemplate: String, pixelRatio: Int, zoom: Int, after: (x: Int, y: Int)?, limit: Int) throws
        -> [StoredTileRow] {
        let keys = tiles.keys.filter { key in
            key.urlTemplate == urlTemplate && key.pixelRatio == pixelRatio && key.tile.z == zoom
                && after.map { (key.tile.x, key.tile.y) > ($0.x, $0.y) } ?? true
        }.sorted { ($0.tile.x, $0.tile.y) < ($1.tile.x, $1.tile.y) }.prefix(limit)
        return keys.map { key in
            StoredTileRow(key: key, content: StoredContent(expires: nil, modified: nil, etag: nil, data: tiles[key],
                                                           compressed: false, accessed: 0, mustRevalidate: false))
        }
    }

    // MARK: Inspection for tests

    /// The tile keys linked to a region (empty for an unknown row).
    func linkedTileKeys(region rowID: Int64) -> Set<TileKey> {
        rows[rowID]?.tiles ?? []
    }

    /// SQLite's BINARY collation: memcmp of the UTF-8 bytes.
    static func bytesAscending(_ a: String, _ b: String) -> Bool {
        a.utf8.lexicographicallyPrecedes(b.utf8)
    }
}
