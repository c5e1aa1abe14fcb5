import ProvisionModel

/// The four files of a sprite, as MapLibre's offline download fetches them.
public enum SpriteURLs {
    /// The URL of a sprite file: `base` with `@2x` (when `ratio` > 1) and `.png`/`.json` inserted
    /// after the path and before any query (`…/sprite?query=true` → `…/sprite@2x.png?query=true`).
    /// A fragment is dropped, as MapLibre drops it.
    public static func url(base: String, ratio: Int, kind: ResourceKind) -> String {
        let parts = URLSegments(base)
        let suffix = (ratio > 1 ? "@2x" : "") + (kind == .spriteJSON ? ".json" : ".png")
        return parts.text(0..<parts.path.end) + suffix + parts.text(parts.query)
    }

    /// The four resources of the sprite at `base`, always at both 1x and 2x whatever the pack's
    /// pixel ratio: image 1x, image 2x, JSON 1x, JSON 2x. An empty base has none.
    public static func resources(base: String) -> [ResourceRef] {
        guard !base.isEmpty else { return [] }
        return [
            ResourceRef(url: url(base: base, ratio: 1, kind: .spriteImage), kind: .spriteImage),
            ResourceRef(url: url(base: base, ratio: 2, kind: .spriteImage), kind: .spriteImage),
            ResourceRef(url: url(base: base, ratio: 1, kind: .spriteJSON), kind: .spriteJSON),
            ResourceRef(url: url(base: base, ratio: 2, kind: .spriteJSON), kind: .spriteJSON),
        ]
    }
}
