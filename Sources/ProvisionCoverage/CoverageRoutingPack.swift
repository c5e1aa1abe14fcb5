import Foundation
import ProvisionFoundation
import TileMath

/// What happens to a graph tile of a routing pack (`data-graph-state` of its cell).
public enum GraphTileState: String, CaseIterable, Sendable {
    /// Needed and held: the apply keeps it (a plan), or the extract holds it (an audit).
    case present
    /// Needed and not held yet: the apply fetches it.
    case add
    /// Held but needed by no region any more: the apply drops it from the extract.
    case remove
    /// Needed, but the source has no tile there (a cell without roads).
    case absent

    /// The stroke of its cells: the map cells' colour of the same state, grey for a cell without roads.
    var colour: String {
        switch self {
        case .present: return "#1f5f99"
        case .add: return "#1b7a37"
        case .remove: return "#b3261e"
        case .absent: return "#7d868f"
        }
    }
}

/// A routing pack as a coverage picture shows it: the graph tiles of one level that its regions
/// need (to add, kept, known without roads) and those the apply removes, drawn as cells over
/// every view, and counted in a table.
public struct CoverageRoutingPack: Equatable, Sendable {
    /// One graph tile: its index on the level, its cell on the grid, its state and its regions.
    public struct Tile: Equatable, Sendable {
        public var index: Int
        /// The cell in degrees (Valhalla's grid of the level).
        public var bounds: BoundingBox
        public var state: GraphTileState
        /// The ids of the regions whose geometry meets it, in job order (none for a removed tile).
        public var regions: [String]

        public init(index: Int, bounds: BoundingBox, state: GraphTileState, regions: [String]) {
            self.index = index
            self.bounds = bounds
            self.state = state
            self.regions = regions
        }
    }

    /// The most graph tiles a picture draws of one pack, so a pack of a country keeps the page a
    /// few megabytes (each view draws them again).
    public static let tileBudget = 4_096

    public var id: String
    /// The level drawn.
    public var level: Int
    /// What the plan does with the pack (`build (new)`, `kept`), or, for an audit, `in the lock`.
    public var status: String
    /// The pack's tiles of `level` by state (all of them, drawn or not).
    public var counts: [GraphTileState: Int]
    /// The tiles drawn: at most `drawn` (`tileBudget`), those to add and remove first.
    public var tiles: [Tile]

    /// The pack's `tiles` of `level` (every one, for the counts); `drawn` caps what is drawn.
    public init(id: String, level: Int, status: String, tiles: [Tile], drawn: Int = CoverageRoutingPack.tileBudget) {
        self.id = id
        self.level = level
        self.status = status
        self.counts = Dictionary(tiles.map { ($0.state, 1) }, uniquingKeysWith: +)
        let order = Dictionary(uniqueKeysWithValues: [GraphTileState.add, .remove, .present, .absent].enumerated().map { ($1, $0) })
        self.tiles = Array(tiles.sorted { (order[$0.state] ?? 0, $0.index) < (order[$1.state] ?? 0, $1.index) }.prefix(max(0, drawn)))
    }
}

extension CoverageMap {
    /// The picture with the graph tiles of `packs` drawn on its views and counted in a table after
    /// the others.
    public func showing(routing packs: [CoverageRoutingPack]) -> CoverageMap {
        guard !packs.isEmpty else { return self }
        var map = self
        map.routingPacks = packs
        let rows = packs.map { pack in
            [pack.id, "\(pack.level)", pack.status] + GraphTileState.allCases.map { grouped(pack.counts[$0] ?? 0) }
                + [grouped(pack.tiles.count)]
        }
        map.tables.append(CoverageTable(caption: "Routing packs (graph tiles of the level drawn, as the plan or the lock has them; "
                                            + "the views draw at most \(grouped(CoverageRoutingPack.tileBudget)) of each pack, "
                                            + "those to add and remove first)",
                                        header: ["pack", "level", "status", "present", "to add", "to remove", "no roads", "drawn"],
                                        rows: rows))
        return map
    }
}
