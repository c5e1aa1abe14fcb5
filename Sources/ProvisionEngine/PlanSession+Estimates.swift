import Foundation
import ProvisionModel
import ProvisionPlanning
import ProvisionStore

extension PlanSession {
    /// The mean tile size per zoom of every tile template an MBTiles origin serves, measured in
    /// the archive (a sample per zoom), for the plan's byte estimate. The longest matching
    /// prefix serves a template, as the router routes it; an archive that cannot be measured
    /// leaves the template to the assumed size per format.
    func originTileSizes(_ input: PlanInput) -> [String: OriginTileSizes] {
        let archives = Dictionary(self.archives.map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a })
        let origins = self.input.job.origins.sorted { $0.prefix.count > $1.prefix.count }
        var sources: [TileSource] = input.packs.values.flatMap(\.tileSources)
        sources += input.regionTilesets.values.flatMap(\.tileSources)
        var out: [String: OriginTileSizes] = [:]
        for source in sources where out[source.template] == nil {
            guard let origin = origins.first(where: { source.template.hasPrefix($0.prefix) }),
                  case .mbtiles(let file) = origin.mirror, let archive = archives[file.path] else { continue }
            let low = min(max(source.minZoom, 0), 30), high = min(max(source.maxZoom, low), 30)
            // Sizes only refine the estimates: an archive that cannot be measured keeps the default sizes.
            guard let sizes = try? archive.meanTileSizes(zooms: low...high), !sizes.isEmpty else { continue }
            out[source.template] = OriginTileSizes(origin: file.lastPathComponent, sizes: sizes)
        }
        return out
    }
}
