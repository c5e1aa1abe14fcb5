import Foundation
import ProvisionFoundation
import ProvisionModel
import TileMath

/// What a tile position holds in a coverage picture (`data-state` of a cell).
public enum CoverageState: String, CaseIterable, Sendable {
    /// Linked to its region and wanted: the apply keeps it (a plan) or it is there (an audit).
    case present
    /// The lock expects it for its region but the store does not link it (an audit).
    case missing
    /// Wanted by its region but not linked yet: the apply adds it.
    case add
    /// Linked to its region but no longer wanted: the apply removes the link.
    case remove
    /// Wanted or linked by more than one region: one cell lists them all (`data-regions`).
    case shared

    /// The order a cell standing for several tiles picks its state by: the most pressing first.
    ///
    /// Why: an aggregated cell is drawn in one colour, and a reviewer must not lose a missing or
    /// added tile in a sea of present ones; its `data-tiles` still counts every state inside.
    public static let precedence: [CoverageState] = [.missing, .add, .remove, .shared, .present]

    /// The word the legend shows.
    public var label: String {
        switch self {
        case .present: return "present"
        case .missing: return "missing"
        case .add: return "to add"
        case .remove: return "to remove"
        case .shared: return "shared"
        }
    }
}

/// Tile counts by coverage state.
public struct StateCounts: Equatable, Sendable {
    private var present = 0, missing = 0, add = 0, remove = 0, shared = 0

    /// Zero of every state.
    public init() {}

    /// The count of `state`.
    public subscript(state: CoverageState) -> Int {
        get {
            switch state {
            case .present: return present
            case .missing: return missing
            case .add: return add
            case .remove: return remove
            case .shared: return shared
            }
        }
        set {
            switch state {
            case .present: present = newValue
            case .missing: missing = newValue
            case .add: add = newValue
            case .remove: remove = newValue
            case .shared: shared = newValue
            }
        }
    }

    /// The sum over every state.
    public var total: Int { present + missing + add + remove + shared }

    /// The states with a non-zero count, in `CoverageState.allCases` order.
    public var nonZero: [(state: CoverageState, count: Int)] {
        CoverageState.allCases.compactMap { self[$0] > 0 ? ($0, self[$0]) : nil }
    }

    /// The state of highest precedence with a non-zero count.
    public var dominant: CoverageState? {
        CoverageState.precedence.first { self[$0] > 0 }
    }

    /// The counts of both, state by state.
    public static func + (a: StateCounts, b: StateCounts) -> StateCounts {
        var sum = a
        for state in CoverageState.allCases { sum[state] += b[state] }
        return sum
    }
}

/// One cell of a coverage picture: a tile of the view's zoom, or, where the view is aggregated,
/// a tile of a coarser zoom standing for the view's tiles inside it.
public struct CoverageCell: Equatable, Sendable {
    /// The cell's own tile (`data-z`, `data-x`, `data-y`): `z` is the view's zoom or coarser.
    public var tile: TileID
    /// `data-state`; for an aggregated cell, the state of highest precedence inside.
    public var state: CoverageState
    /// For a single tile shared by regions, what happens to it (`data-change`): add when any
    /// region adds it, else missing, else present when any region keeps it, else remove.
    public var change: CoverageState?
    /// The regions (indices into `CoverageMap.regions`, ascending) the tile or tiles belong to.
    public var regions: [Int]
    /// For an aggregated cell, the view-zoom tiles inside by state (`data-tiles`); nil for one tile.
    public var tally: StateCounts?

    /// A cell of `tile`; `tally` only for an aggregated one.
    public init(tile: TileID, state: CoverageState, change: CoverageState? = nil, regions: [Int], tally: StateCounts? = nil) {
        self.tile = tile
        self.state = state
        self.change = change
        self.regions = regions
        self.tally = tally
    }
}

/// The picture of one zoom.
public struct CoverageView: Equatable, Sendable {
    /// The zoom whose tiles the view shows.
    public var zoom: Int
    /// The zoom of its cells: `zoom`, or coarser when the tiles were more than the cell budget.
    public var cellZoom: Int
    /// The cells, ordered by x then y.
    public var cells: [CoverageCell]
    /// The view-zoom tiles by state (a tile shared by regions counts once, as shared).
    public var tiles: StateCounts
    /// Per region (as `CoverageMap.regions`), its view-zoom tiles by its own state (present,
    /// missing, add or remove; a shared tile counts for each of its regions), and under `shared`
    /// how many of them other regions share.
    public var regionTiles: [StateCounts]
    /// What the cells cannot show, one sentence each (tiles an audit cannot place).
    public var notes: [String]

    /// A view of `zoom` whose cells are tiles of `cellZoom`.
    public init(zoom: Int, cellZoom: Int, cells: [CoverageCell], tiles: StateCounts, regionTiles: [StateCounts],
                notes: [String] = []) {
        self.zoom = zoom
        self.cellZoom = cellZoom
        self.cells = cells
        self.tiles = tiles
        self.regionTiles = regionTiles
        self.notes = notes
    }

    /// Whether the cells are tiles of a coarser zoom than the view's.
    public var isAggregated: Bool { cellZoom < zoom }
}

/// The outline of a region in degrees: polygon rings, lines and points.
public struct CoverageShape: Equatable, Sendable {
    /// Polygon rings (outer rings and holes alike; the renderer fills with the even-odd rule).
    public var rings: [[LngLat]]
    /// Lines, each a list of positions.
    public var lines: [[LngLat]]
    /// Single positions.
    public var points: [LngLat]

    /// A shape of rings, lines and points.
    public init(rings: [[LngLat]] = [], lines: [[LngLat]] = [], points: [LngLat] = []) {
        self.rings = rings
        self.lines = lines
        self.points = points
    }

    /// Whether the shape has no position at all.
    public var isEmpty: Bool { rings.allSatisfy(\.isEmpty) && lines.allSatisfy(\.isEmpty) && points.isEmpty }
}

/// A region of a coverage picture.
public struct CoverageRegion: Equatable, Sendable {
    /// How the region relates to the picture's job.
    public enum Role: String, Sendable {
        /// A region of the job.
        case job
        /// A region row the store holds and the job no longer lists (the plan removes it).
        case removed
        /// A region row of an audited store.
        case store
    }

    /// `data-region`: the job region id, or `row-N` for a store row no lock names.
    public var id: String
    /// The region's name, as people know it.
    public var name: String
    /// Whether it is the job's, one the job drops, or a store's.
    public var role: Role
    /// Its outline.
    public var shape: CoverageShape

    /// A region of a picture.
    public init(id: String, name: String, role: Role, shape: CoverageShape) {
        self.id = id
        self.name = name
        self.role = role
        self.shape = shape
    }
}

/// A table of numbers the picture shows beside the cells (the plan's or the audit's).
public struct CoverageTable: Equatable, Sendable {
    /// What the table holds.
    public var caption: String
    /// The column titles (empty strings for none).
    public var header: [String]
    /// The rows, each as many cells as `header`.
    public var rows: [[String]]
    /// A last row in bold (totals); empty for none.
    public var footer: [String]

    /// A table with an optional totals row.
    public init(caption: String, header: [String], rows: [[String]], footer: [String] = []) {
        self.caption = caption
        self.header = header
        self.rows = rows
        self.footer = footer
    }
}

/// What a coverage picture shows: the regions, per zoom the tiles as cells in their states, and
/// the numbers of the document it illustrates (a plan or an audit).
///
/// Built by streaming every tile once per zoom and aggregating into at most `cellBudget` cells
/// over all views, so the picture of a million-tile plan stays a few megabytes.
public struct CoverageMap: Equatable, Sendable {
    /// What the picture illustrates.
    public enum Kind: String, Sendable {
        case plan, audit
    }

    /// The most cells a picture holds over all its views (about 120 bytes each in the markup).
    public static let defaultCellBudget = 32_768

    /// A plan's picture or an audit's.
    public var kind: Kind
    /// `Plan for job "cities" against ./store`.
    public var title: String
    /// The regions, in job (or row) order; cells refer to them by index.
    public var regions: [CoverageRegion]
    /// One view per zoom, ascending.
    public var views: [CoverageView]
    /// The document's numbers: per region and totals.
    public var tables: [CoverageTable]
    /// The JSON document the picture illustrates (`plan --json`, `audit --json`).
    public var document: JSONValue
    /// The cell budget the views were built under.
    public var cellBudget: Int
    /// The search packs drawn on the views (`showing`); empty for none.
    public var searchPacks: [CoverageSearchPack] = []
    /// The routing packs whose graph tiles of one level are drawn on the views (`showing(routing:)`); empty for none.
    public var routingPacks: [CoverageRoutingPack] = []

    /// A picture of `views` over `regions`.
    public init(kind: Kind, title: String, regions: [CoverageRegion], views: [CoverageView], tables: [CoverageTable],
                document: JSONValue, cellBudget: Int) {
        self.kind = kind
        self.title = title
        self.regions = regions
        self.views = views
        self.tables = tables
        self.document = document
        self.cellBudget = cellBudget
    }

    /// The view of `zoom`, if the picture has one.
    public func view(zoom: Int) -> CoverageView? {
        views.first { $0.zoom == zoom }
    }
}
