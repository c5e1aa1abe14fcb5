import Foundation
import ProvisionFoundation
import ProvisionModel

extension AuditDocument {
    /// The audit of a store from what it holds (`summary`), SQLite's integrity check and its
    /// lock: per region the tiles per template and zoom the lock expects beside those present,
    /// the lock's regions the store lacks, the files that do not belong, and (given `sharing`) the
    /// footprint of each region.
    public init(store: String, summary: StoreSummary, integrity: [String], lock: LockDocument?, unexpectedFiles: [String],
                sharing: ContentSharing? = nil) {
        let byRow = Dictionary((lock?.regions ?? []).map { ($0.rowID, $0) }, uniquingKeysWith: { a, _ in a })
        var regions: [Region] = []
        for region in summary.regions {
            let entry = byRow[region.rowID]
            var zooms: [(template: String, zoom: Int, expected: Int?, present: Int)] = []
            var seen = Set<String>()
            for expected in entry?.expectedTiles ?? [] {
                let present = region.tileCounts.first { $0.urlTemplate == expected.urlTemplate && $0.zoom == expected.zoom }?.count ?? 0
                zooms.append((expected.urlTemplate, expected.zoom, expected.count, present))
                seen.insert("\(expected.zoom) \(expected.urlTemplate)")
            }
            for count in region.tileCounts where !seen.contains("\(count.zoom) \(count.urlTemplate)") {
                zooms.append((count.urlTemplate, count.zoom, entry == nil ? nil : 0, count.count))
            }
            zooms.sort { ($0.template, $0.zoom) < ($1.template, $1.zoom) }
            // A definition or description that is not JSON is shown as it is stored (text, or base64).
            let definition = (try? JSONValue.parse(region.definition)) ?? .string(String(decoding: region.definition, as: UTF8.self))
            let metadata: JSONValue = region.description.map { data in
                (try? JSONValue.parse(data)) ?? .string(data.base64EncodedString())
            } ?? .null
            var row = Region(rowID: region.rowID, key: entry?.key, definition: definition, metadata: metadata, zooms: zooms,
                             expectedResources: entry?.expectedResources, presentResources: region.resourceCount)
            row.isShardPart = lock?.shard != nil
            regions.append(row)
        }
        let rows = Set(summary.regions.map(\.rowID))
        let missing = (lock?.regions ?? []).filter { !rows.contains($0.rowID) }.map(\.key)
        self.init(store: store, hasLock: lock != nil, integrity: integrity, regions: regions, tileCount: summary.tileCount,
                  resourceCount: summary.resourceCount, byteCount: summary.tileBytes + summary.resourceBytes,
                  orphanTiles: summary.orphanTileCount, orphanResources: summary.orphanResourceCount,
                  unexpectedFiles: unexpectedFiles, missingRegions: missing)
        shard = lock?.shard
        attribution = lock?.attribution ?? []
        footprint = sharing.map { sharing in
            Footprint(sharing: sharing, regions: summary.regions.map {
                StoredRegion(rowID: $0.rowID, definition: $0.definition, description: $0.description)
            }, lock: lock)
        }
    }

    /// What a plan of the job against this store would change, as audit findings.
    public static func differences(_ plan: Plan) -> [String] {
        var out: [String] = []
        for region in plan.regions where region.action != .keep || region.hasTileChanges || region.resources.hasChanges {
            let totals = region.totals
            out.append("region \(region.key): \(region.action.rawValue), tiles +\(grouped(totals.add)) -\(grouped(totals.remove)), "
                       + "resources +\(grouped(region.resources.add.count)) -\(grouped(region.resources.remove.count))")
        }
        for removed in plan.removedRegions {
            out.append("region \(removed.key ?? "row \(removed.rowID)") is not in the job (\(plural(removed.tileCount, "tile")))")
        }
        for drift in plan.drift { out.append("\(drift.url) changed upstream since the last apply") }
        return out
    }
}

extension AuditDocument.Verification {
    /// What `--verify` found: the damage (unusable rows named, the first 20), expired rows, and
    /// whether the content digest (`digest`, nil without a lock) matches the lock's.
    public init(damage: StoreDamage, expired: Int, digestMatchesLock: Bool?) {
        let unusable = damage.unusable
        self.init(checked: damage.checked, corrupt: unusable.prefix(20).map { row in
            switch row.key {
            case .resource(let url): return "resource \(url): \(row.reason)"
            case .tile(let key): return "tile \(key.urlTemplate) \(key.tile.z)/\(key.tile.x)/\(key.tile.y): \(row.reason)"
            }
        }, corruptCount: unusable.count, expired: expired, digestMatchesLock: digestMatchesLock)
        differingChunks = damage.mismatchedChunks
        differingRows = damage.rows.count - unusable.count
    }
}
