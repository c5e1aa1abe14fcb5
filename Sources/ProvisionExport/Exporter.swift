import Foundation
import ProvisionCodecs
import ProvisionEngine
import ProvisionExecution
import ProvisionFoundation
import ProvisionModel
import ProvisionReports
import ProvisionStore
import TileMath

/// Writes one tileset of a store as an MBTiles or PMTiles archive.
///
/// Vector tiles are written gzip-compressed (stored zlib streams rewrapped, not compressed
/// again), images as they are. Bounds and centre come from the exported regions
/// (`ExportExtent`), name, description and vector layers from the tileset's TileJSON (or the
/// style's inline source) when it has them, attribution as the catalog credits the tileset.
struct Exporter {
    let database: OfflineDatabase
    let regions: [Int64]?
    let lock: LockDocument?
    let progress: ProgressSink

    /// Writes `source` as `format` (`.mbtiles` or `.pmtiles`) to `destination`, reported as
    /// `finalURL` (where a bundle moves it) when given.
    func export(_ source: ExportCatalog.Source, format: ExportRun.Format, to destination: URL,
                finalURL: URL? = nil) throws(ProvisionError) -> ExportResult.File {
        let shape: Shape
        do {
            shape = try self.shape(of: source)
        } catch {
            throw ProvisionError(store: error, context: "cannot read source '\(source.name)' from the store", kind: readKind(error))
        }
        let summary: (tiles: Int, contents: Int, bytes: UInt64)
        switch format {
        case .pmtiles: summary = try writePMTiles(source, shape: shape, to: destination)
        default: summary = try writeMBTiles(source, shape: shape, to: destination)
        }
        let file = ExportResult.File(
            path: (finalURL ?? destination).path, source: source.name, urlTemplate: source.set.urlTemplate, format: format.rawValue,
            tileFormat: shape.format.name, tileCount: summary.tiles, contentCount: summary.contents,
            emptyCount: source.set.emptyCount, byteCount: summary.bytes, minZoom: source.set.minZoom,
            maxZoom: source.set.maxZoom, bounds: shape.extent.boundsText, center: shape.extent.centerText)
        progress.emit(.exportFile(path: file.path, source: file.source, tiles: file.tileCount, distinct: file.contentCount,
                                  bytes: file.byteCount))
        return file
    }

    /// Emits `export-finished` and returns `result`.
    func finish(_ result: ExportResult) -> ExportResult {
        progress.emit(.exportFinished(files: result.files.count, tiles: result.files.map(\.tileCount).reduce(0, +),
                                      bytes: result.files.map(\.byteCount).reduce(0, +)))
        return result
    }

    // MARK: What the archive says about its tiles

    /// The tile format, extent and metadata of a tileset.
    struct Shape {
        var format: TileFormat
        var extent: ExportExtent
        /// `name`, `description` from the TileJSON, its `vector_layers` for vector tiles, and the
        /// tileset's attribution (`ExportCatalog.Source.attribution`).
        var name: String
        var description: String?
        var attribution: String?
        var vectorLayers: JSONValue?
    }

    /// What the tiles are: vector tiles or an image format.
    enum TileFormat: Equatable {
        case mvt
        case image(ImageFormat)

        /// `pbf`, `png`, `jpg` or `webp`, as MBTiles' `format` names them.
        var name: String {
            switch self {
            case .mvt: return "pbf"
            case .image(.jpeg): return "jpg"
            case .image(let format): return format.rawValue
            }
        }

        var pmtilesType: PMTiles.TileType {
            switch self {
            case .mvt: return .mvt
            case .image(.png): return .png
            case .image(.jpeg): return .jpeg
            case .image(.webp): return .webp
            }
        }

        /// Vector tiles are gzip-compressed in both archive formats; images are stored as they are.
        var isGzipped: Bool { self == .mvt }
    }

    private func shape(of source: ExportCatalog.Source) throws -> Shape {
        var format = TileFormat.mvt
        if let first = try database.firstTileRowID(of: source.set, regions: regions), let row = try database.tileRow(first) {
            let tile = try ArchiveTile(stored: row.data, compressed: row.compressed, gzip: false)
            format = ImageFormat(tile.payload).map(TileFormat.image) ?? .mvt
        }
        let set = source.set
        var stored = BoundingBox(west: -180, south: -WebMercator.maxLatitude, east: 180, north: WebMercator.maxLatitude)
        if let extent = try database.storedExtent(of: set, zoom: set.maxZoom, regions: regions) {
            let flip = { (y: Int) in source.isTMS ? (1 << set.maxZoom) - 1 - y : y }
            stored = ExportExtent.box(zoom: set.maxZoom, minX: extent.minX, minY: min(flip(extent.minY), flip(extent.maxY)),
                                      maxX: extent.maxX, maxY: max(flip(extent.minY), flip(extent.maxY)))
        }
        let rows = Set(try database.regionRows(linking: set, among: regions))
        let definitions = try database.regions().filter { rows.contains($0.rowID) }.map(\.definition)
        let tileJSON = source.tileJSON
        func text(_ key: String) -> String? {
            tileJSON?[key]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        }
        return Shape(format: format, extent: ExportExtent(definitions: definitions, stored: stored, minZoom: set.minZoom),
                     name: text("name") ?? source.name, description: text("description"), attribution: source.attribution,
                     vectorLayers: format == .mvt ? tileJSON?["vector_layers"].flatMap { $0.arrayValue == nil ? nil : $0 } : nil)
    }

    // MARK: Writing

    private func writeMBTiles(_ source: ExportCatalog.Source, shape: Shape,
                              to destination: URL) throws(ProvisionError) -> (tiles: Int, contents: Int, bytes: UInt64) {
        let writer = try writing(destination) { try MBTilesArchiveWriter(destination: destination) }
        defer { writer.abandon() }
        let set = source.set
        try copying(source, to: destination) {
            let tiles = ArchiveTiles(gzip: shape.format.isGzipped) { (id: TileID, tile) in
                try Self.write { try writer.add(id, tile: tile) }
            }
            try database.forEachTile(of: set, regions: regions) { stored, data, compressed in
                try tiles.add(source.isTMS ? TileID(z: stored.z, x: stored.x, y: stored.tmsY) : stored, stored: data,
                              compressed: compressed)
            }
            try tiles.finish()
        }
        var metadata: [(name: String, value: String)] = [
            ("name", shape.name), ("format", shape.format.name), ("bounds", shape.extent.boundsText),
            ("center", shape.extent.centerText), ("minzoom", String(set.minZoom)), ("maxzoom", String(set.maxZoom)),
        ]
        if let attribution = shape.attribution { metadata.append(("attribution", attribution)) }
        if let description = shape.description { metadata.append(("description", description)) }
        metadata.append(("type", "baselayer"))
        if let layers = shape.vectorLayers {
            metadata.append(("json", JSONValue.object(JSONObject([("vector_layers", layers)])).serialized(.compact)))
        }
        let summary = try writing(destination) { try writer.finish(metadata: metadata) }
        return (summary.tileCount, summary.contentCount, summary.byteCount)
    }

    private func writePMTiles(_ source: ExportCatalog.Source, shape: Shape,
                              to destination: URL) throws(ProvisionError) -> (tiles: Int, contents: Int, bytes: UInt64) {
        let set = source.set
        guard set.maxZoom <= TileID.maxPMTilesZoom else {
            throw ProvisionError(.invalidJob, "source '\(source.name)' has tiles at z\(set.maxZoom); PMTiles addresses "
                                 + "zooms up to \(TileID.maxPMTilesZoom)")
        }
        // Hilbert order: every tile's id and row id (16 bytes a tile), sorted, then each row read by id.
        var order: [(id: UInt64, row: Int64)] = []
        order.reserveCapacity(set.tileCount)
        do {
            try database.forEachTileRowID(of: set, regions: regions) { row, stored in
                let tile = source.isTMS ? TileID(z: stored.z, x: stored.x, y: stored.tmsY) : stored
                guard let id = tile.pmtilesID else {
                    throw StoreError(.invalidInput, "tile \(stored) of \(set.urlTemplate) is outside the tile grid")
                }
                order.append((id, row))
            }
        } catch {
            throw ProvisionError(store: error, context: "cannot read source '\(source.name)' from the store", kind: readKind(error))
        }
        order.sort { $0.id < $1.id }
        let writer = try writing(destination) {
            try PMTilesArchiveWriter(destination: destination, expectedTiles: order.count)
        }
        defer { writer.abandon() }
        // One read transaction for every row: SQLite takes its file lock once, not once a tile.
        try copying(source, to: destination) {
            let tiles = ArchiveTiles(gzip: shape.format.isGzipped) { (id: UInt64, tile) in
                try Self.write { try writer.add(tileID: id, tile: tile) }
            }
            try database.reading {
                for entry in order {
                    guard let row = try database.tileRow(entry.row) else {
                        throw StoreError(.notFound, "tile row \(entry.row) disappeared while exporting", path: database.path)
                    }
                    if row.data.isEmpty { continue }  // a tile without content: not in the archive
                    try tiles.add(entry.id, stored: row.data, compressed: row.compressed)
                }
                try tiles.finish()
            }
        }
        order = []
        var metadata = JSONObject([("name", .string(shape.name)), ("format", .string(shape.format.name))])
        if let attribution = shape.attribution { metadata["attribution"] = .string(attribution) }
        if let description = shape.description { metadata["description"] = .string(description) }
        metadata["type"] = "baselayer"
        if let layers = shape.vectorLayers { metadata["vector_layers"] = layers }
        let summary = try writing(destination) {
            try writer.finish(tileType: shape.format.pmtilesType, gzipped: shape.format.isGzipped, zooms: set.minZoom...set.maxZoom,
                              extent: shape.extent, metadata: JSONValue.object(metadata).data(.compact))
        }
        return (summary.tileCount, summary.contentCount, summary.byteCount)
    }

    /// Turns stored rows `(key, bytes, compressed)` into archive tiles on worker threads, one per
    /// core (inflating, hashing and rewrapping are most of an export's CPU), while the caller reads
    /// and writes, and hands them to `write` in the order the rows were added. A row that
    /// cannot be read is thrown, in its turn, as a read error.
    private final class ArchiveTiles<Key: Sendable> {
        private let pool: OrderedPool<(Key, Data, Bool), Result<(Key, ArchiveTile), any Error>>
        private let write: (Key, ArchiveTile) throws -> Void
        private var ready: [Result<(Key, ArchiveTile), any Error>] = []

        init(gzip: Bool, write: @escaping (Key, ArchiveTile) throws -> Void) {
            let memo = ArchiveTileMemo()
            pool = OrderedPool(workers: ProcessInfo.processInfo.activeProcessorCount, batchSize: 64,
                               name: "provision.export") { key, stored, compressed in
                Result { (key, try memo.tile(stored: stored, compressed: compressed) {
                    try ArchiveTile(stored: stored, compressed: compressed, gzip: gzip)
                }) }
            }
            self.write = write
        }

        deinit { pool.close() }

        func add(_ key: Key, stored: Data, compressed: Bool) throws {
            pool.add((key, stored, compressed)) { ready.append($0) }
            try flush()
        }

        func finish() throws {
            pool.drain { ready.append($0) }
            try flush()
        }

        private func flush() throws {
            defer { ready.removeAll(keepingCapacity: true) }
            for made in ready {
                let (key, tile) = try made.get()
                try write(key, tile)
            }
        }
    }

    /// An error of the output side, told apart from one reading the store.
    private struct WriteFailure: Error {
        var error: Error
    }

    /// Runs `body`, which reads `source` from the store and writes to `destination`: a failure
    /// `write(_:)` marked is a write error, any other a read error of the source.
    private func copying(_ source: ExportCatalog.Source, to destination: URL, _ body: () throws -> Void) throws(ProvisionError) {
        do {
            try body()
        } catch let failure as WriteFailure {
            throw writeError(failure.error, destination)
        } catch {
            throw ProvisionError(store: error, context: "cannot read source '\(source.name)' from the store", kind: readKind(error))
        }
    }

    /// Runs a write of the output inside `copying`, marking its failure as the output's.
    private static func write(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch {
            throw WriteFailure(error: error)
        }
    }

    /// Runs a write to `destination`, turning its failures into `cannotWrite` errors.
    private func writing<T>(_ destination: URL, _ body: () throws -> T) throws(ProvisionError) -> T {
        do {
            return try body()
        } catch {
            throw writeError(error, destination)
        }
    }

    private func writeError(_ error: Error, _ destination: URL) -> ProvisionError {
        ProvisionError(store: error, context: "cannot write \(destination.path)", kind: .cannotWriteStore)
    }

    /// A tile that does not inflate is damaged input (65); any other read failure is 1.
    private func readKind(_ error: Error) -> ExitCode {
        ProvisionError.storeFailure(error)?.code == .compression ? .invalidJob : .failure
    }
}
