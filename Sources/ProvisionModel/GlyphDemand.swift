import ProvisionFoundation
/// What a `"glyphs": "used"` style pack's labels are made of: the symbol layers that draw text,
/// as the plan carries them so the apply (and a re-plan, and `audit --verify`) can evaluate them
/// over the stored tiles' features without reading the style again.
public struct GlyphDemand: Equatable, Sendable {
    /// The style's `glyphs` URL template.
    public var template: String
    /// The symbol layers with a `text-field`, in style order.
    public var layers: [LabelLayer]
    /// Every font stack the layers use, in MapLibre's order (`FontStacks`).
    public var fontStacks: [[String]]

    /// A demand over `layers`.
    public init(template: String, layers: [LabelLayer], fontStacks: [[String]]) {
        self.template = template
        self.layers = layers
        self.fontStacks = fontStacks
    }
}

/// One symbol layer that draws text: where its features come from and how its text is made.
public struct LabelLayer: Equatable, Sendable {
    /// The layer's `id`.
    public var id: String
    /// The tile URL template of its source; nil when the source is not a tiled source of the
    /// pack (a GeoJSON source, a missing one): its labels cannot be read from tiles.
    public var urlTemplate: String?
    /// The source's `maxzoom`: tiles at it are drawn (and laid out) at every higher zoom too.
    public var sourceMaxZoom: Int
    /// The layer's `source-layer`.
    public var sourceLayer: String?
    /// The layer's `minzoom` (0 when absent) and `maxzoom` (exclusive; 24 when absent).
    public var minZoom: Double
    public var maxZoom: Double
    /// The layer's `filter`, as written.
    public var filter: JSONValue?
    /// `layout.text-field`, as written.
    public var textField: JSONValue
    /// `layout.text-transform`, as written (any value makes upper- and lower-case forms count).
    public var textTransform: JSONValue?
    /// `layout.text-writing-mode`, as written (a vertical mode makes vertical punctuation count).
    public var writingMode: JSONValue?
    /// The font stacks its `text-font` can output.
    public var fontStacks: [[String]]

    /// A label layer with the given parts.
    public init(id: String, urlTemplate: String?, sourceMaxZoom: Int, sourceLayer: String?, minZoom: Double,
                maxZoom: Double, filter: JSONValue?, textField: JSONValue, textTransform: JSONValue? = nil,
                writingMode: JSONValue? = nil, fontStacks: [[String]]) {
        self.id = id
        self.urlTemplate = urlTemplate
        self.sourceMaxZoom = sourceMaxZoom
        self.sourceLayer = sourceLayer
        self.minZoom = minZoom
        self.maxZoom = maxZoom
        self.filter = filter
        self.textField = textField
        self.textTransform = textTransform
        self.writingMode = writingMode
        self.fontStacks = fontStacks
    }

    /// The layer as a JSON object (the saved plan's form).
    public var json: JSONValue {
        var object = JSONObject([
            ("id", .string(id)), ("sourceMaxZoom", .int(sourceMaxZoom)), ("minZoom", .double(minZoom)),
            ("maxZoom", .double(maxZoom)), ("textField", textField),
            ("fontStacks", .array(fontStacks.map { .array($0.map { .string($0) }) })),
        ])
        if let urlTemplate { object["urlTemplate"] = .string(urlTemplate) }
        if let sourceLayer { object["sourceLayer"] = .string(sourceLayer) }
        if let filter { object["filter"] = filter }
        if let textTransform { object["textTransform"] = textTransform }
        if let writingMode { object["writingMode"] = writingMode }
        return .object(object)
    }

    /// Reads the saved plan's form; nil when `json` is not one.
    public init?(json: JSONValue) {
        guard let id = json["id"]?.stringValue, let maxZoom = json["sourceMaxZoom"]?.intValue,
              let minZ = json["minZoom"]?.doubleValue, let maxZ = json["maxZoom"]?.doubleValue,
              let textField = json["textField"], let stacks = json["fontStacks"]?.arrayValue else { return nil }
        var fontStacks: [[String]] = []
        for stack in stacks {
            guard let fonts = stack.arrayValue?.compactMap(\.stringValue) else { return nil }
            fontStacks.append(fonts)
        }
        self.init(id: id, urlTemplate: json["urlTemplate"]?.stringValue, sourceMaxZoom: maxZoom,
                  sourceLayer: json["sourceLayer"]?.stringValue, minZoom: minZ, maxZoom: maxZ, filter: json["filter"],
                  textField: textField, textTransform: json["textTransform"], writingMode: json["writingMode"],
                  fontStacks: fontStacks)
    }
}

extension GlyphDemand {
    /// The demand as a JSON object (the saved plan's form).
    public var json: JSONValue {
        ["template": .string(template), "layers": .array(layers.map(\.json)),
         "fontStacks": .array(fontStacks.map { .array($0.map { .string($0) }) })]
    }

    /// Reads the saved plan's form; nil when `json` is not one.
    public init?(json: JSONValue) {
        guard let template = json["template"]?.stringValue, let layers = json["layers"]?.arrayValue,
              let stacks = json["fontStacks"]?.arrayValue else { return nil }
        var parsed: [LabelLayer] = []
        for layer in layers {
            guard let label = LabelLayer(json: layer) else { return nil }
            parsed.append(label)
        }
        self.init(template: template, layers: parsed, fontStacks: stacks.map { ($0.arrayValue ?? []).compactMap(\.stringValue) })
    }
}

extension Plan {
    /// Adds the glyph resources an apply found a region row's labels need (by row key) to that
    /// row's wanted resources (and to those it adds, when not linked yet) and to its style
    /// pack's resources, and marks those rows as no longer waiting for the apply.
    public mutating func resolveGlyphs(_ byRow: [String: [ResourceRef]]) {
        for i in regions.indices {
            guard let refs = byRow[regions[i].key] else { continue }
            let row = regions[i]
            let wanted = Array(Set(row.resources.wanted + refs)).sorted()
            // Linked before: wanted and not added, or no longer wanted (`remove`).
            let known = Set(row.resources.wanted.map(\.url)).union(row.resources.remove)
            let added = refs.filter { !known.contains($0.url) }
            let keptURLs = Set(wanted.map(\.url))
            regions[i].resources = ResourceChanges(wanted: wanted, add: Array(Set(row.resources.add + added)).sorted(),
                                                   remove: row.resources.remove.filter { !keptURLs.contains($0) })
            regions[i].glyphsAtApply = false
            if let p = stylePacks.firstIndex(where: { $0.id == row.stylePackID }) {
                stylePacks[p].resources = Array(Set(stylePacks[p].resources + refs)).sorted()
            }
        }
        if !regions.contains(where: \.glyphsAtApply) { countsArePrecise = true }
    }
}
