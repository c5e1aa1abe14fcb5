import Foundation
import ProvisionCodecs
import ProvisionModel

extension LockDocument {
    /// The lock recording what an apply of `plan` left in the store: per region its row, the
    /// digest of its definition, the tiles it expects per template and zoom and whether it is
    /// complete; per style pack the digests of its style and TileJSONs; the store's content.
    public init(plan: Plan, outcome: ApplyOutcome, content: ContentDigest, epoch: Int64) {
        let incomplete = Set(outcome.incompleteRegions)
        let regions = plan.regions.compactMap { region -> RegionEntry? in
            guard let rowID = outcome.regionRows[region.key] else { return nil }
            return RegionEntry(
                key: region.key, regionID: region.regionID, stylePack: region.stylePackID, rowID: rowID,
                definitionDigest: "sha256:" + SHA256.hex(region.definition),
                expectedTiles: region.zoomChanges.map {
                    TileCount(urlTemplate: $0.urlTemplate, zoom: $0.zoom, count: $0.counts.add + $0.counts.keep)
                },
                expectedResources: region.resources.wanted.count, isComplete: !incomplete.contains(region.key))
        }
        let packs = plan.stylePacks.map { pack in
            var digests: [String: String] = [:]
            for source in pack.sources {
                if let url = source.tileJSONURL, let body = plan.documents[url] { digests[url] = "sha256:" + SHA256.hex(body.data) }
            }
            var entry = PackEntry(id: pack.id, style: pack.styleURL,
                                  styleDigest: plan.documents[pack.styleURL].map { "sha256:" + SHA256.hex($0.data) },
                                  sources: pack.sources, tileJSONDigests: digests)
            entry.glyphs = pack.glyphPolicy == .used ? .used : nil
            return entry
        }
        self.init(jobName: plan.jobName, jobDigest: plan.jobDigest, epoch: epoch, stylePacks: packs, regions: regions,
                  tileCount: content.tileCount, resourceCount: content.resourceCount, byteCount: content.byteCount,
                  contentDigest: "sha256:" + content.digest, chunks: content.chunks)
    }

    /// The content this lock records, as the store would hash it.
    public var content: ContentDigest {
        ContentDigest(tileCount: tileCount, resourceCount: resourceCount, byteCount: byteCount,
                      digest: String(contentDigest.dropFirst("sha256:".count)), chunks: chunks)
    }

    /// Whether a region is marked incomplete: the build that wrote this lock is unfinished.
    public var hasIncompleteRegions: Bool { regions.contains { !$0.isComplete } }

    /// The lock document's bytes as written to `provision.lock.json`.
    public var fileBytes: Data { json.data(.prettySorted) + Data("\n".utf8) }
}
