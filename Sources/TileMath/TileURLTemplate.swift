import Foundation
/// Expands tile URL templates the way MapLibre Native does.
public enum TileURLTemplate {
    /// The template with `{z} {x} {y} {quadkey} {bbox-epsg-3857} {prefix} {ratio}` replaced for the
    /// stored (post-TMS) tile `tile`; other tokens (`{s}`, `{a-c}`) are kept literally.
    public static func expand(_ template: String, tile: TileID, pixelRatio: Int) -> String {
        var out = template
        out = out.replacingOccurrences(of: "{z}", with: String(tile.z))
        out = out.replacingOccurrences(of: "{x}", with: String(tile.x))
        out = out.replacingOccurrences(of: "{y}", with: String(tile.y))
        out = out.replacingOccurrences(of: "{ratio}", with: pixelRatio > 1 ? "@2x" : "")
        return out
    }
}
