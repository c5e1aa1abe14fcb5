import ProvisionFoundation
import ProvisionModel

/// A style rewritten to open from a bundle directory: tiled sources read PMTiles archives in
/// it, sprites and glyphs its files, every such URL relative to the directory.
public enum BundleStyle {
    /// `style` with each source named in `archives` (style source name → archive file name)
    /// reading `pmtiles://FILE`, each sprite base in `sprites` (URL → relative base) and the glyph
    /// template replaced by `glyphs` when given. A rewritten source keeps its `type` and its
    /// other properties (`tileSize`, `attribution`, `encoding`, `promoteId` …) but loses `url`,
    /// `tiles`, `scheme`, `bounds`, `minzoom` and `maxzoom`, which the archive's header states.
    /// Everything else is left as it is.
    public static func rewrite(_ style: JSONValue, archives: [String: String], sprites: [String: String],
                               glyphs: String?) -> JSONValue {
        guard var object = style.objectValue else { return style }
        if var sources = object["sources"]?.objectValue {
            for (name, value) in sources.members {
                guard let file = archives[name], let source = value.objectValue else { continue }
                var rewritten = JSONObject()
                if let type = source["type"] { rewritten["type"] = type }
                rewritten["url"] = .string("pmtiles://" + file)
                let dropped: Set = ["type", "url", "tiles", "scheme", "bounds", "minzoom", "maxzoom"]
                for member in source.members where !dropped.contains(member.key) { rewritten[member.key] = member.value }
                sources[name] = .object(rewritten)
            }
            object["sources"] = .object(sources)
        }
        switch object["sprite"] {
        case .string(let base)?:
            if let relative = sprites[base] { object["sprite"] = .string(relative) }
        case .array(let entries)?:
            object["sprite"] = .array(entries.map { entry in
                guard var sprite = entry.objectValue, let base = sprite["url"]?.stringValue, let relative = sprites[base] else {
                    return entry
                }
                sprite["url"] = .string(relative)
                return .object(sprite)
            })
        default:
            break
        }
        if let glyphs, object["glyphs"] != nil { object["glyphs"] = .string(glyphs) }
        return .object(object)
    }
}
