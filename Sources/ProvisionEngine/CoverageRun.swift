import Foundation
import ProvisionFoundation
import ProvisionModel
import ProvisionCoverage
import ProvisionReports
import ProvisionStore
import RoutingGraph
import TileMath

/// The offline database is what the coverage pictures read: its region rows and, zoom by zoom,
/// its links in tile order.
extension OfflineDatabase: CoverageStore {}

extension PlanSession {
    /// The coverage picture of `plan` (`plan --html`, `--svg --zoom`), read against this
    /// session's store.
    ///
    /// - Throws: `usage` (64) when `options` asks for a zoom the plan has no tiles at; `failure`
    ///   when the store cannot be read.
    public func coverage(of plan: Plan, options: CoverageOptions) throws(ProvisionError) -> CoverageMap {
        let database = try openForReading()
        // Best effort: closing a read-only connection.
        defer { try? database?.close() }
        do {
            let packs = plan.searchPacks.map { pack in
                (id: pack.pack.id, file: pack.pack.file, regions: Optional(pack.regions),
                 status: pack.action == .build ? "to build (\(pack.reason))" : "kept")
            }
            return try CoverageMap.plan(plan, document: document(plan), store: database, options: options)
                .showing(CoverageSearchPacks.read(packs, store: store.url))
                .showing(routing: CoverageRoutingPacks.plan(plan, options: options))
        } catch {  // a CoverageError says for itself that it is usage (64)
            throw ProvisionError(store: error, context: "cannot read the store at \(store.display)", kind: .failure)
        }
    }
}

extension AuditRun {
    /// The coverage picture of an audit (`audit --html`, `--svg --zoom`) of the store at `path`,
    /// illustrating `document`.
    static func coverage(_ document: AuditDocument, path: StorePath, lock: LockDocument?,
                         options: CoverageOptions) throws(ProvisionError) -> CoverageMap {
        do {
            let database = try path.openForReading(epoch: lock?.epoch ?? 0)
            // Best effort: closing a read-only connection.
            defer { try? database.close() }
            let packs = (lock?.searchPacks ?? []).map { (id: $0.id, file: $0.file, regions: [String]?.none, status: "in the lock") }
            return try CoverageMap.audit(document, lock: lock, store: database, options: options)
                .showing(CoverageSearchPacks.read(packs, store: path.url))
                .showing(routing: CoverageRoutingPacks.lock(lock?.routingPacks ?? [], options: options))
        } catch {  // a CoverageError says for itself that it is usage (64)
            throw ProvisionError(store: error, context: "cannot audit the store at \(path.display)", kind: .failure)
        }
    }
}

/// The search packs a coverage picture shows, each read from the store's file.
enum CoverageSearchPacks {
    /// Each pack's places per region (`regions`, or every region its file names when nil) and the
    /// first places to draw; a file missing or unreadable is shown as such, with no numbers.
    static func read(_ packs: [(id: String, file: String, regions: [String]?, status: String)], store: URL) -> [CoverageSearchPack] {
        packs.map { pack in
            let url = store.appendingPathComponent(pack.file)
            let missing = { (why: String) in
                CoverageSearchPack(id: pack.id, file: pack.file, status: "\(pack.status); \(why)",
                                   regions: (pack.regions ?? []).map { (id: $0, places: nil) }, entries: nil, places: [])
            }
            guard FileManager.default.fileExists(atPath: url.path) else { return missing("no file yet") }
            let overview: PlaceIndexOverview
            do {
                overview = try PlaceIndexDatabase.overview(url, limit: CoverageSearchPack.placeBudget)
            } catch {
                return missing("the file cannot be read (\(describe(error)))")
            }
            let regions = pack.regions ?? overview.regions.keys.sorted()
            return CoverageSearchPack(id: pack.id, file: pack.file, status: pack.status,
                                      regions: regions.map { (id: $0, places: overview.regions[$0] ?? 0) },
                                      entries: overview.entries,
                                      places: overview.places.map { CoverageSearchPack.Place(position: $0.position, zooms: $0.zooms) })
        }
    }
}

/// The routing packs a coverage picture shows: each pack's graph tiles of one level.
enum CoverageRoutingPacks {
    /// The plan's packs: the tiles to add, keep and remove and the cells known without roads, each
    /// with the regions whose geometry (grown by its buffer) meets it.
    static func plan(_ plan: Plan, options: CoverageOptions) throws -> [CoverageRoutingPack] {
        guard let level = try options.chosenGraphLevel(Set(plan.routingPacks.flatMap(\.pack.levels))),
              let grid = GraphLevel(level) else { return [] }
        var areas: [String: CoverArea] = [:]
        for row in plan.regions where areas[row.regionID] == nil { areas[row.regionID] = row.area }
        return plan.routingPacks.filter { $0.pack.levels.contains(level) }.map { pack in
            let covers = pack.regions.map { region in
                (region, Set(areas[region].map { GraphTileCover($0, level: grid).map(\.index) } ?? []))
            }
            func tiles(_ list: [RoutingTile], _ state: GraphTileState) -> [CoverageRoutingPack.Tile] {
                list.filter { $0.level == level }.map { tile in
                    CoverageRoutingPack.Tile(index: tile.index, bounds: bounds(tile.index, grid), state: state,
                                             regions: covers.filter { $0.1.contains(tile.index) }.map(\.0))
                }
            }
            let status = pack.action == .build ? "to build (\(pack.reason))" : "kept"
            return CoverageRoutingPack(id: pack.pack.id, level: level, status: status,
                                       tiles: tiles(pack.add, .add) + tiles(pack.keep, .present) + tiles(pack.remove, .remove)
                                           + tiles(pack.absent, .absent))
        }
    }

    /// The lock's packs: the tiles each extract holds and the cells its source had none of (the
    /// lock does not say which regions need a tile).
    static func lock(_ records: [RoutingPackRecord], options: CoverageOptions) throws -> [CoverageRoutingPack] {
        let levels = Set(records.flatMap { $0.tiles.map(\.tile.level) + $0.absent.map(\.level) })
        guard let level = try options.chosenGraphLevel(levels), let grid = GraphLevel(level) else { return [] }
        return records.map { record in
            let held = record.tiles.map(\.tile).filter { $0.level == level }.map { ($0, GraphTileState.present) }
            let absent = record.absent.filter { $0.level == level }.map { ($0, GraphTileState.absent) }
            return CoverageRoutingPack(id: record.id, level: level, status: "in the lock", tiles: (held + absent).map {
                CoverageRoutingPack.Tile(index: $0.0.index, bounds: bounds($0.0.index, grid), state: $0.1, regions: [])
            })
        }
    }

    /// The cell of tile `index` on `grid`, in degrees.
    static func bounds(_ index: Int, _ grid: GraphLevel) -> BoundingBox {
        let corner = grid.baseCorner(index: index)
        return BoundingBox(west: corner.lng, south: corner.lat, east: corner.lng + grid.tileSize, north: corner.lat + grid.tileSize)
    }
}
