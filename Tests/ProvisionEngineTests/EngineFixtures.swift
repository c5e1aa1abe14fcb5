import Foundation
import ProvisionEngine
import ProvisionModel

/// Fixtures the engine tests share.
enum EngineFixtures {
    /// Examples/demo: the demo style, TileJSON, sprites, glyphs and tiles.
    static let demo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Examples/demo")

    /// A job with overlapping regions (London inside Greater London), a polygon (Paris) and two
    /// style packs of the demo style (pixel ratios 1 and 2), on the demo data.
    static let overlappingJob: String = {
        let style = "https://tiles.example.com/demo/styles/streets.json"
        return """
        {"version": 1, "name": "shards",
         "stylePacks": [{"id": "streets", "style": "\(style)", "pixelRatio": 1},
                        {"id": "retina", "style": "\(style)", "pixelRatio": 2}],
         "regions": [
           {"id": "london", "name": "London", "bbox": [-0.1278, 51.4874, -0.0978, 51.5174], "zoom": [10, 14], "stylePacks": ["streets"]},
           {"id": "greater-london", "name": "Greater London", "bbox": [-0.16, 51.47, -0.06, 51.53], "zoom": [11, 13],
            "stylePacks": ["streets", "retina"]},
           {"id": "paris", "name": "Paris", "zoom": [10, 14], "stylePacks": ["retina"],
            "geometry": {"type": "Polygon", "coordinates": [[[2.3522, 48.8366], [2.3822, 48.8420], [2.3700, 48.8666],
                                                             [2.3522, 48.8366]]]}}],
         "origins": {"https://tiles.example.com/demo/tiles/streets/": "mbtiles:\(demo.path)/streets.mbtiles",
                     "https://tiles.example.com/demo/": "\(demo.path)"}}
        """
    }()

    /// A scratch directory holding `overlappingJob` as `job.json`, and applies of it into stores
    /// beside it, as the engine runs them (no network, a fixed clock).
    final class OverlappingJobRoot {
        let url: URL
        let context = RunContext(environment: [:], now: 1_800_000_000, sourceDateEpoch: 1_700_000_000)

        init(_ name: String) throws {
            url = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            try Data(EngineFixtures.overlappingJob.utf8).write(to: url.appendingPathComponent("job.json"))
        }

        deinit { try? FileManager.default.removeItem(at: url) }

        /// Applies the job (or the shard of it) into the store `store` beside it.
        func apply(into store: String, shard: Shard? = nil) throws -> ApplyRun.Result {
            var request = RunRequest(job: url.appendingPathComponent("job.json").path,
                                           store: url.appendingPathComponent(store).path)
            request.shard = shard
            return try ApplyRun(request: request, context: context, progress: SilentProgress()).run()
        }
    }
}
