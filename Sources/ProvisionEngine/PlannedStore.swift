import Foundation
import ProvisionModel
import ProvisionStore
import TileMath

/// The store as the next apply will find it once it has recovered and repaired it, read
/// without writing a byte of it, so that a plan counts exactly what that apply does.
///
/// An apply first takes in the tiles and resources a killed apply left in its unfinished file
/// (`StoreBuild.recover`: unlinked rows it then does not fetch again), and with `--repair` or
/// `--refresh` removes the damaged rows (`StoreRepair`), which it then fetches again. The plan
/// reads the unfinished file from a copy (its journal played back there, as recovery plays it
/// back in place) and hides the damaged rows.
final class PlannedStore: StoreInventory {
    private let base: OfflineDatabase
    /// A copy of a killed apply's unfinished file, whose rows count as stored (unlinked).
    private let recovered: OfflineDatabase?
    /// Where the copy is; removed by `close()`.
    private let copyDirectory: URL?
    /// Damaged rows the apply removes first.
    private let hiddenTiles: Set<TileKey>
    private let hiddenResources: Set<String>

    /// The view of `base` (the store at `store`) with the unfinished file of a killed apply
    /// taken in, and the `hidden` rows removed.
    init(base: OfflineDatabase, store: StorePath, epoch: Int64, hidden: [ChunkKey] = []) throws {
        self.base = base
        var tiles = Set<TileKey>(), resources = Set<String>()
        for key in hidden {
            switch key {
            case .tile(let tile): tiles.insert(tile)
            case .resource(let url): resources.insert(url)
            }
        }
        hiddenTiles = tiles
        hiddenResources = resources
        (recovered, copyDirectory) = Self.openCopy(of: store.partialBuildURL, epoch: epoch)
    }

    /// Whether the view differs from the store as it is.
    var changesTheStore: Bool { recovered != nil || !hiddenTiles.isEmpty || !hiddenResources.isEmpty }

    /// Opens a copy of the unfinished file (and its journal), played back as recovery would;
    /// nil when there is none or it is not a readable offline database (recovery drops it).
    private static func openCopy(of partial: URL, epoch: Int64) -> (OfflineDatabase?, URL?) {
        guard FileManager.default.fileExists(atPath: partial.path) else { return (nil, nil) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("provision-plan-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let copy = directory.appendingPathComponent("recovered.db")
            try FileManager.default.copyItem(at: partial, to: copy)
            if FileManager.default.fileExists(atPath: partial.path + "-journal") {
                try FileManager.default.copyItem(atPath: partial.path + "-journal", toPath: copy.path + "-journal")
            }
            // Opening it read-write plays back the journal the kill left, in the copy.
            return (try OfflineDatabase(url: copy, epoch: epoch, options: .init(create: false)), directory)
        } catch {
            // Best effort: the copy could not be recovered, so the plan reads the store as it is; its directory may be half made.
            try? FileManager.default.removeItem(at: directory)
            return (nil, nil)
        }
    }

    func close() {
        // Best effort: a throwaway copy, read only; removed just below.
        try? recovered?.close()
        if let copyDirectory { try? FileManager.default.removeItem(at: copyDirectory) }
    }

    deinit { close() }

    private func isHidden(_ column: StoredTileColumn, y: Int) -> Bool {
        !hiddenTiles.isEmpty && hiddenTiles.contains(TileKey(urlTemplate: column.urlTemplate, pixelRatio: column.pixelRatio,
                                                             tile: TileID(z: column.zoom, x: column.x, y: y)))
    }

    /// The hidden tiles linked to region row `rowID`, by template and zoom.
    private func hiddenLinks(region rowID: Int64) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for key in hiddenTiles {
            let column = StoredTileColumn(urlTemplate: key.urlTemplate, pixelRatio: key.pixelRatio, zoom: key.tile.z,
                                          x: key.tile.x, rows: key.tile.y..<(key.tile.y + 1))
            try base.forEachStoredTile(in: column, linkedTo: rowID) { _ in counts["\(key.tile.z)\u{0}\(key.urlTemplate)", default: 0] += 1 }
        }
        return counts
    }

    // MARK: - StoreInventory

    func regions() throws -> [StoredRegion] { try base.regions() }

    func forEachStoredTile(in column: StoredTileColumn, linkedTo region: Int64?, _ body: (Int) throws -> Void) throws {
        var ys: [Int] = []
        try base.forEachStoredTile(in: column, linkedTo: region) { y in if !isHidden(column, y: y) { ys.append(y) } }
        if region == nil, let recovered {
            // Recovery takes the unfinished file's rows in unlinked: stored, under no region.
            try recovered.forEachStoredTile(in: column, linkedTo: nil) { y in ys.append(y) }
            ys = Array(Set(ys)).sorted()
        }
        for y in ys { try body(y) }
    }

    func storedResources(among urls: [String]) throws -> Set<String> {
        var stored = try base.storedResources(among: urls).subtracting(hiddenResources)
        if let recovered { stored.formUnion(try recovered.storedResources(among: urls)) }
        return stored
    }

    func resourceData(url: String) throws -> Data? {
        if !hiddenResources.contains(url), let data = try base.resourceData(url: url) { return data }
        return try recovered?.resourceData(url: url)
    }

    func linkedTileCounts(region rowID: Int64) throws -> [TileCount] {
        let counts = try base.linkedTileCounts(region: rowID)
        guard !hiddenTiles.isEmpty else { return counts }
        let hidden = try hiddenLinks(region: rowID)
        return counts.compactMap { count in
            var count = count
            count.count -= hidden["\(count.zoom)\u{0}\(count.urlTemplate)"] ?? 0
            return count.count > 0 ? count : nil
        }
    }

    func tileLinkCount(region rowID: Int64) throws -> Int {
        let count = try base.tileLinkCount(region: rowID)
        guard !hiddenTiles.isEmpty else { return count }
        return count - (try hiddenLinks(region: rowID)).values.reduce(0, +)
    }

    func linkedResources(region rowID: Int64) throws -> [String] {
        try base.linkedResources(region: rowID).filter { !hiddenResources.contains($0) }
    }

    func meanTileSizes(urlTemplate: String, zooms: ClosedRange<Int>) throws -> [Int: Double] {
        try base.meanTileSizes(urlTemplate: urlTemplate, zooms: zooms)
    }

    func tileRows(urlTemplate: String, pixelRatio: Int, zoom: Int, after: (x: Int, y: Int)?, limit: Int) throws -> [StoredTileRow] {
        try base.tileRows(urlTemplate: urlTemplate, pixelRatio: pixelRatio, zoom: zoom, after: after, limit: limit)
            .filter { !hiddenTiles.contains($0.key) }
    }

    func forEachStoredTileLength(in column: StoredTileColumn, _ body: (Int, Int64) throws -> Void) throws {
        var rows: [Int: Int64] = [:]
        if let recovered { try recovered.forEachStoredTileLength(in: column) { y, bytes in rows[y] = bytes } }
        try base.forEachStoredTileLength(in: column) { y, bytes in if !isHidden(column, y: y) { rows[y] = bytes } }
        for y in rows.keys.sorted() { try body(y, rows[y] ?? 0) }
    }

    func storedResourceSizes(among urls: [String]) throws -> [String: Int64] {
        var sizes = try recovered?.storedResourceSizes(among: urls) ?? [:]
        for (url, size) in try base.storedResourceSizes(among: urls) where !hiddenResources.contains(url) { sizes[url] = size }
        return sizes
    }

    func meanResourceSize(kind: ResourceKind) throws -> Double? { try base.meanResourceSize(kind: kind) }
}
