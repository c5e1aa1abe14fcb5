import Foundation
import ProvisionFoundation
import ProvisionModel
import ProvisionReports
import TileMath

/// Which views a coverage picture holds and how many cells they may use.
public struct CoverageOptions: Equatable, Sendable {
    /// Only this zoom (`--svg FILE --zoom Z`); nil for every zoom of the plan or store.
    public var zoom: Int?
    /// The most cells over all views.
    public var cellBudget: Int
    /// The level of the routing packs' graph tiles drawn (`--graph-level N`); nil for the highest
    /// level the packs have.
    public var graphLevel: Int?

    /// Every zoom (or only `zoom`) under `cellBudget` cells, with the graph tiles of `graphLevel`.
    public init(zoom: Int? = nil, cellBudget: Int = CoverageMap.defaultCellBudget, graphLevel: Int? = nil) {
        self.zoom = zoom
        self.cellBudget = cellBudget
        self.graphLevel = graphLevel
    }

    /// The graph level to draw of packs having `levels`: the one asked for, else the highest; nil
    /// when there are no packs.
    ///
    /// - Throws: `CoverageError.graphLevelNotCovered` when no pack has the level asked for.
    public func chosenGraphLevel(_ levels: Set<Int>) throws -> Int? {
        guard let graphLevel else { return levels.max() }
        guard levels.contains(graphLevel) else { throw CoverageError.graphLevelNotCovered(graphLevel, available: levels.sorted()) }
        return graphLevel
    }
}

/// Why a coverage picture cannot be drawn as asked.
public enum CoverageError: Error, Equatable, CustomStringConvertible {
    /// The zoom asked for is not one the plan or the store has tiles at.
    case zoomNotCovered(Int, available: [Int])
    /// The graph level asked for is not one of the job's (or the lock's) routing packs.
    case graphLevelNotCovered(Int, available: [Int])

    /// The sentence the command line prints.
    public var description: String {
        switch self {
        case .zoomNotCovered(let zoom, let available):
            guard let first = available.first, let last = available.last else {
                return "--zoom \(zoom): the picture has no tiles at any zoom"
            }
            return "--zoom \(zoom): the picture has tiles at \(first == last ? "z\(first)" : "z\(first)–\(last)") only"
        case .graphLevelNotCovered(let level, let available):
            guard !available.isEmpty else { return "--graph-level \(level): the picture has no routing packs" }
            return "--graph-level \(level): the routing packs have levels \(available.map(String.init).joined(separator: ", ")) only"
        }
    }
}

extension CoverageMap {
    /// The picture of a plan: per zoom, the tiles each region wants and the store links to it,
    /// as present (kept), add, remove or shared; regions the job dropped are drawn as removed.
    ///
    /// - Parameters:
    ///   - store: the store the plan was computed against; nil when it has no database yet.
    public static func plan(_ plan: Plan, document: PlanDocument, store: CoverageStore?,
                            options: CoverageOptions = CoverageOptions()) throws -> CoverageMap {
        var regions: [CoverageRegion] = []
        var indexByID: [String: Int] = [:]
        var streams: [CoverageBuilder.Stream] = []
        var rowRegions: [Int64: Int] = [:]
        var tms = Set<String>()
        var zooms = Set<Int>()
        for row in plan.regions {
            let index = indexByID[row.regionID] ?? {
                regions.append(CoverageRegion(id: row.regionID, name: row.name, role: .job, shape: CoverageShape(area: row.area)))
                indexByID[row.regionID] = regions.count - 1
                return regions.count - 1
            }()
            if let rowID = row.rowID { rowRegions[rowID] = index }
            for set in row.tileSets {
                if set.isTMS { tms.insert(set.urlTemplate) }
                zooms.formUnion(set.zooms)
                let area = row.area
                streams.append(CoverageBuilder.Stream(region: index, rowID: row.rowID, template: set.urlTemplate,
                                                      pixelRatio: set.pixelRatio, zooms: Set(set.zooms),
                                                      cover: { set.cover(of: area, zoom: $0) }))
            }
        }
        for pack in plan.stylePacks {
            for source in pack.sources where source.scheme == "tms" { tms.insert(source.urlTemplate) }
        }
        if let store, !plan.removedRegions.isEmpty {
            let stored = Dictionary(try store.regions().map { ($0.rowID, $0) }, uniquingKeysWith: { a, _ in a })
            for removed in plan.removedRegions {
                let id = removed.key.flatMap { $0.split(separator: "/").first.map(String.init) } ?? "row-\(removed.rowID)"
                if let index = indexByID[id] {
                    rowRegions[removed.rowID] = index
                    continue
                }
                // A definition that is not JSON draws no shape; the removed region is still listed.
                let definition = stored[removed.rowID].flatMap { try? JSONValue.parse($0.definition) } ?? .null
                let shape = CoverageShape.area(definition: definition).map(CoverageShape.init(area:)) ?? CoverageShape()
                regions.append(CoverageRegion(id: id, name: id, role: .removed, shape: shape))
                indexByID[id] = regions.count - 1
                rowRegions[removed.rowID] = regions.count - 1
            }
        }
        if let store { zooms.formUnion(try store.linkedZooms()) }
        let builder = CoverageBuilder(mode: .plan, regionCount: regions.count, streams: streams, rowRegions: rowRegions,
                                      tmsTemplates: tms)
        let views = try builder.views(zooms: try chosen(zooms, options: options), budget: options.cellBudget, store: store)
        return CoverageMap(kind: .plan, title: "Plan for job \"\(document.jobName)\" against \(document.store)", regions: regions,
                           views: views, tables: tables(document), document: document.json, cellBudget: options.cellBudget)
    }

    /// The zooms to draw: all of `available`, or the one `options` names.
    static func chosen(_ available: Set<Int>, options: CoverageOptions) throws -> [Int] {
        let sorted = available.sorted()
        guard let zoom = options.zoom else { return sorted }
        guard available.contains(zoom) else { throw CoverageError.zoomNotCovered(zoom, available: sorted) }
        return [zoom]
    }

    /// The plan's numbers, as `plan --json` has them: per region row and in total.
    static func tables(_ doc: PlanDocument) -> [CoverageTable] {
        var rows = doc.regions.map { region in
            [region.action.symbol.trimmingCharacters(in: .whitespaces), region.id, region.name, region.stylePack ?? "—",
             grouped(region.tiles.add), grouped(region.tiles.remove), grouped(region.tiles.keep),
             grouped(region.resources.add), grouped(region.resources.remove), bytes(region.estimatedBytes)]
        }
        rows += doc.removedRegions.map { removed in
            ["-", removed.key ?? "row \(removed.rowID)", "", "", "0", grouped(removed.tileCount), "0", "0",
             grouped(removed.resourceCount), bytes(0)]
        }
        let tiles = doc.tileTotals, resources = doc.resourceTotals
        let regionTable = CoverageTable(
            caption: "Regions (tile and resource links, as plan --json counts them)",
            header: ["", "region", "name", "style pack", "tiles +", "tiles −", "tiles =", "resources +", "resources −",
                     "est. download"],
            rows: rows,
            footer: ["", "total", "", "", grouped(tiles.add), grouped(tiles.remove), grouped(tiles.keep), grouped(resources.add),
                     grouped(resources.remove), bytes(doc.bytesToDownload)])
        let totals = CoverageTable(caption: "Plan", header: ["", ""], rows: [
            ["tiles to download", grouped(doc.tilesToDownload)],
            ["bytes to download" + (doc.countsArePrecise ? "" : " (estimated)"), bytes(doc.bytesToDownload)],
            ["regions to create, update, delete", "\(doc.regions.filter { $0.action == .add }.count), "
                + "\(doc.regions.filter { $0.action == .update }.count), \(doc.removedRegions.count)"],
            ["changes", doc.hasChanges ? "yes" : "no"],
        ])
        return [regionTable, totals]
    }

    /// `1.2 MiB (1,234,567 bytes)`: a readable size in the unit style of every text, then the
    /// exact number the JSON has.
    static func bytes(_ count: Int64) -> String { ByteFormat.exact(count) }
}
