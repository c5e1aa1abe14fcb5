import Foundation

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
}
