import Foundation
import ProvisionFoundation
import ProvisionModel
import ProvisionReports
import TileMath

extension CoverageMap {
    /// The picture of an audited store: per zoom, the tiles linked to each region row as
    /// present, and those its lock expects but the store lacks as missing.
    ///
    /// Where the missing tiles are is known when the cover of the row's definition at a zoom has
    /// as many tiles as the lock expects there (a source's `bounds` can make them differ, and the
    /// lock does not keep bounds); elsewhere the view says how many are missing in a note.
    public static func audit(_ document: AuditDocument, lock: LockDocument?, store: CoverageStore,
                             options: CoverageOptions = CoverageOptions()) throws -> CoverageMap {
        let entries = Dictionary((lock?.regions ?? []).map { ($0.rowID, $0) }, uniquingKeysWith: { a, _ in a })
        var regions: [CoverageRegion] = []
        var indexByID: [String: Int] = [:]
        var streams: [CoverageBuilder.Stream] = []
        var rowRegions: [Int64: Int] = [:]
        var zooms = Set<Int>()
        var unplaced: [Int: [String]] = [:]
        for row in document.regions {
            let id = entries[row.rowID]?.regionID ?? "row-\(row.rowID)"
            let area = CoverageShape.area(definition: row.definition)
            let index = indexByID[id] ?? {
                let name = row.metadata["name"]?.stringValue ?? id
                regions.append(CoverageRegion(id: id, name: name, role: .store,
                                              shape: area.map(CoverageShape.init(area:)) ?? CoverageShape()))
                indexByID[id] = regions.count - 1
                return regions.count - 1
            }()
            rowRegions[row.rowID] = index
            var wanted: [String: Set<Int>] = [:]
            for zoom in row.zooms {
                zooms.insert(zoom.zoom)
                guard let expected = zoom.expected, expected > 0 else { continue }
                if let area, TileCover(area, zoom: zoom.zoom).count == expected {
                    wanted[zoom.template, default: []].insert(zoom.zoom)
                } else if zoom.present < expected {
                    unplaced[zoom.zoom, default: []].append(
                        "\(row.key ?? "row \(row.rowID)"): \(grouped(expected - zoom.present)) of \(plural(expected, "tile")) "
                            + "missing (\(zoom.template)), not placed: the region's cover differs from the lock's count")
                }
            }
            for (template, templateZooms) in wanted.sorted(by: { $0.key < $1.key }) {
                guard let area else { continue }
                streams.append(CoverageBuilder.Stream(region: index, rowID: row.rowID, template: template, pixelRatio: nil,
                                                      zooms: templateZooms, cover: { TileCover(area, zoom: $0) }))
            }
        }
        var tms = Set<String>()
        for pack in lock?.stylePacks ?? [] {
            for source in pack.sources where source.scheme == "tms" { tms.insert(source.urlTemplate) }
        }
        let builder = CoverageBuilder(mode: .audit, regionCount: regions.count, streams: streams, rowRegions: rowRegions,
                                      tmsTemplates: tms)
        var views = try builder.views(zooms: try chosen(zooms, options: options), budget: options.cellBudget, store: store)
        for i in views.indices { views[i].notes = unplaced[views[i].zoom] ?? [] }
        return CoverageMap(kind: .audit, title: "Audit of the store \(document.store)", regions: regions, views: views,
                           tables: tables(document), document: document.json, cellBudget: options.cellBudget)
    }

    /// The audit's numbers, as `audit --json` has them: per region row and for the store.
    static func tables(_ doc: AuditDocument) -> [CoverageTable] {
        var present = 0, expected = 0
        let rows = doc.regions.map { region -> [String] in
            let tilesPresent = region.zooms.reduce(0) { $0 + $1.present }
            let tilesExpected = region.zooms.contains { $0.expected == nil } ? nil : region.zooms.reduce(0) { $0 + ($1.expected ?? 0) }
            present += tilesPresent
            expected += tilesExpected ?? 0
            return [region.isComplete ? "✓" : "✗", String(region.rowID), region.key ?? "—", grouped(tilesPresent),
                    tilesExpected.map(grouped) ?? "?", grouped(region.presentResources),
                    region.expectedResources.map(grouped) ?? "?"]
        }
        let regionTable = CoverageTable(
            caption: "Regions (as audit --json counts them)",
            header: ["", "row", "key", "tiles present", "tiles expected", "resources present", "resources expected"],
            rows: rows, footer: ["", "", "total", grouped(present), doc.hasLock ? grouped(expected) : "?", "", ""])
        var storeRows = [
            ["tiles", grouped(doc.tileCount)], ["resources", grouped(doc.resourceCount)], ["bytes", bytes(doc.byteCount)],
            ["orphan tiles, resources", "\(grouped(doc.orphanTiles)), \(grouped(doc.orphanResources))"],
            ["integrity", doc.integrity.isEmpty ? "ok" : doc.integrity.joined(separator: "; ")],
            ["whole", doc.isOK ? "yes" : "no"],
        ]
        storeRows += doc.problems.map { ["problem", $0] }
        return [regionTable, CoverageTable(caption: "Store", header: ["", ""], rows: storeRows)]
    }
}
