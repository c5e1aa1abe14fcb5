import Foundation
import ProvisionFoundation
import TileMath

/// A search pack as a coverage picture shows it: its places per region (a table) and where the
/// first of them lie, drawn as dots on the views of the zooms their tiles show them at.
public struct CoverageSearchPack: Equatable, Sendable {
    /// A place drawn: its position and the zooms its tiles show it at.
    public struct Place: Equatable, Sendable {
        public var position: LngLat
        public var zooms: ClosedRange<Int>

        public init(position: LngLat, zooms: ClosedRange<Int>) {
            self.position = position
            self.zooms = zooms
        }
    }

    /// The most places drawn a pack, so a pack of a country keeps the page a few megabytes.
    public static let placeBudget = 2_000

    public var id: String
    /// `search/<id>.db`.
    public var file: String
    /// What the plan does with the file (`build`, `keep`), or, for an audit, `present`; what
    /// kept the file from being read otherwise (`not built yet`, `unreadable`).
    public var status: String
    /// The regions that name the pack, in job order, with the places the file holds in each
    /// (nil when the file could not be read).
    public var regions: [(id: String, places: Int?)]
    /// The file's places (nil when it could not be read).
    public var entries: Int?
    /// The places drawn (at most `placeBudget`, those a map shows first).
    public var places: [Place]

    public init(id: String, file: String, status: String, regions: [(id: String, places: Int?)], entries: Int?,
                places: [Place]) {
        self.id = id
        self.file = file
        self.status = status
        self.regions = regions
        self.entries = entries
        self.places = places
    }

    public static func == (a: CoverageSearchPack, b: CoverageSearchPack) -> Bool {
        a.id == b.id && a.file == b.file && a.status == b.status && a.entries == b.entries && a.places == b.places
            && a.regions.map(\.id) == b.regions.map(\.id) && a.regions.map(\.places) == b.regions.map(\.places)
    }
}

extension CoverageMap {
    /// The picture with `packs` drawn on its views and counted in a table after the others.
    public func showing(_ packs: [CoverageSearchPack]) -> CoverageMap {
        guard !packs.isEmpty else { return self }
        var map = self
        map.searchPacks = packs
        var rows: [[String]] = []
        for pack in packs {
            let total = pack.entries.map(grouped) ?? "—"
            rows.append([pack.id, pack.file, pack.status, "all", total,
                         pack.places.isEmpty ? "—" : grouped(pack.places.count)])
            rows += pack.regions.map { [pack.id, pack.file, pack.status, $0.id, $0.places.map(grouped) ?? "—", ""] }
        }
        map.tables.append(CoverageTable(caption: "Search packs (places per region, as each search/<pack>.db holds them; "
                                            + "the views draw the first \(grouped(CoverageSearchPack.placeBudget)) of each "
                                            + "as dots at the zooms that show them)",
                                        header: ["pack", "file", "status", "region", "places", "drawn"], rows: rows))
        return map
    }
}
