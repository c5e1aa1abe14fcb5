import Foundation
import ProvisionFoundation
import ProvisionModel
import ProvisionPlanning
import ProvisionReports
import ProvisionStore
import TileMath

/// `audit --verify` for style packs the lock records as `"glyphs": "used"`: every label of every
/// tile linked to such a region row has the glyph range of each of its code points, for each
/// font stack its layer uses, stored and linked to the row (and the fallback ranges of layers
/// the scan cannot evaluate are there too).
///
/// The labels are read as the apply reads them: the stored style's symbol layers, over the
/// row's linked tiles, at every zoom a tile is laid out at.
enum GlyphAudit {
    /// What the check found; nil when the lock records no `"used"` pack.
    static func check(_ database: OfflineDatabase, lock: LockDocument?) throws -> AuditDocument.GlyphCheck? {
        guard let lock else { return nil }
        let packs = lock.stylePacks.filter { $0.glyphs == .used }
        guard !packs.isEmpty else { return nil }
        var result = AuditDocument.GlyphCheck()
        for entry in lock.regions {
            guard let pack = packs.first(where: { $0.id == entry.stylePack }) else { continue }
            result.regions += 1
            let name = "region \(entry.key)"
            guard let data = try database.resourceData(url: pack.style) else {
                result.note("\(name): the style \(pack.style) is not stored, so its labels cannot be checked")
                continue
            }
            let style: JSONValue
            do {
                style = try JSONValue.parse(data)
            } catch {
                result.note("\(name): the stored style \(pack.style) is not valid JSON (\(error)), so its labels cannot be checked")
                continue
            }
            guard let template = style["glyphs"]?.stringValue, !template.isEmpty else {
                result.note("\(name): the style \(pack.style) has no glyphs template, so its labels cannot be checked")
                continue
            }
            var sources: [String: GlyphDemandBuilder.SourceTiles] = [:]
            for source in pack.sources {
                sources[source.name] = GlyphDemandBuilder.SourceTiles(urlTemplate: source.urlTemplate, maxZoom: source.maxZoom)
            }
            let outcome = GlyphDemandBuilder.build(style: style, template: template, sources: sources,
                                                   subject: "stylePack '\(pack.id)'")
            var scan = GlyphScan(demand: outcome.demand)
            for source in pack.sources where scan.templates.contains(source.urlTemplate) {
                try database.forEachLinkedTilePayload(region: entry.rowID, urlTemplate: source.urlTemplate) { key, payload, compressed in
                    guard let payload else { return }
                    let t = key.tile
                    let tile = source.scheme == "tms" ? TileID(z: t.z, x: t.x, y: t.tmsY) : t
                    scan.add(payload: payload, compressed: compressed, urlTemplate: source.urlTemplate, tile: tile)
                }
            }
            result.tilesRead += scan.tilesRead
            let linked = Set(try database.linkedResources(region: entry.rowID))
            for ref in Set(scan.resources + outcome.knownResources).sorted() where !linked.contains(ref.url) {
                let why = scan.sample(for: ref.url).map { "needed by the \($0)" } ?? "a range every font stack gets"
                result.note("\(name): glyph range \(ref.url) is not stored, \(why)")
            }
        }
        return result
    }
}
