import Foundation
import ProvisionModel

/// The resources of the plan's footprint: what each desired row links after the apply.
extension Planner {
    /// Bytes assumed for a resource of a kind when the store holds none of that kind to measure:
    /// a deflated glyph range of a Latin font, a 2x sprite sheet and its index, a style, a TileJSON.
    public static let defaultResourceBytes: [ResourceKind: Int] = [
        .style: 20_000, .source: 2_000, .glyphs: 40_000, .spriteImage: 60_000, .spriteJSON: 8_000, .image: 20_000,
    ]
    /// Bytes assumed for a resource of a kind not in `defaultResourceBytes`.
    static let otherResourceBytes = 10_000

    /// Adds every resource the rows want to `sharing`, by the rows wanting it: a stored one with
    /// its stored length; one the apply would download (or replace, for a style or TileJSON that
    /// changed upstream) estimated: a document fetched while planning at its length, another at
    /// the mean stored length of its kind, else `defaultResourceBytes`.
    static func addResources(of rows: [RegionPlan], to sharing: inout ContentSharing, input: PlanInput,
                             store: StoreInventory?, drift: [DocumentDrift]) throws {
        var wanting: [String: (kind: ResourceKind, rows: [Int64])] = [:]
        for (index, row) in rows.enumerated() {
            for ref in row.resources.wanted {
                wanting[ref.url, default: (ref.kind, [])].rows.append(Int64(index))
            }
        }
        let urls = wanting.keys.sorted()
        let stored = try store?.storedResourceSizes(among: urls) ?? [:]
        let drifted = Set(drift.map(\.url))
        var means: [ResourceKind: Double] = [:]
        for url in urls {
            guard let (kind, members) = wanting[url] else { continue }
            if let size = stored[url], !drifted.contains(url) {
                sharing.add(members, kind: kind, bytes: size)
                continue
            }
            let estimate: Double
            if let document = input.documents[url] {
                estimate = Double(document.data.count)
            } else if let mean = means[kind] {
                estimate = mean
            } else {
                let mean = try store?.meanResourceSize(kind: kind) ?? Double(defaultResourceBytes[kind] ?? otherResourceBytes)
                means[kind] = mean
                estimate = mean
            }
            sharing.add(members, kind: kind, bytes: Int64(estimate.rounded()), estimated: true)
        }
    }
}
