import ProvisionFoundation
import ProvisionLabels
import ProvisionModel

/// Builds the `GlyphDemand` of a `"glyphs": "used"` style pack from its style, and the glyph
/// resources that are known before any tile is read: `0-255` of every font stack, and every
/// range of `GlyphPolicy.usedFallback` for the stacks of a layer whose labels cannot be read from
/// tiles (a text the evaluator does not implement, a source that is not a tiled source).
public enum GlyphDemandBuilder {
    /// What the style's labels need before the tiles are read.
    public struct Outcome: Sendable {
        /// The label layers, their source templates filled in.
        public var demand: GlyphDemand
        /// `0-255` of each stack and the fallback ranges, as resources.
        public var knownResources: [ResourceRef]
        /// One note per layer that falls back, saying why and what its fonts get.
        public var notes: [PlanNote]
    }

    /// A source as the demand maps layers to tiles: its tile template and `maxzoom`.
    public struct SourceTiles: Sendable {
        public var urlTemplate: String
        public var maxZoom: Int

        /// A source whose tiles are stored under `urlTemplate`, up to `maxZoom`.
        public init(urlTemplate: String, maxZoom: Int) {
            self.urlTemplate = urlTemplate
            self.maxZoom = maxZoom
        }
    }

    /// The demand of `style` (whose `glyphs` template is `template`), with `sources` the tiled
    /// sources of the pack by name; `subject` names the pack in notes.
    public static func build(style: JSONValue, template: String, sources: [String: SourceTiles],
                             subject: String) -> Outcome {
        var layers: [LabelLayer] = []
        var known = Set<String>()
        var notes: [PlanNote] = []
        for object in FontStacks.parsedLayers(in: style) {
            guard object["type"]?.stringValue == "symbol", let layout = object["layout"]?.objectValue,
                  let field = layout["text-field"], field != .null, let id = object["id"]?.stringValue else { continue }
            let stacks = FontStacks.stacksOfTextFont(layout["text-font"]).filter { !$0.isEmpty }
            guard !stacks.isEmpty else { continue }
            let sourceName = object["source"]?.stringValue ?? ""
            let source = sources[sourceName]
            let layer = LabelLayer(
                id: id, urlTemplate: source?.urlTemplate, sourceMaxZoom: source?.maxZoom ?? 22,
                sourceLayer: object["source-layer"]?.stringValue, minZoom: object["minzoom"]?.doubleValue ?? 0,
                maxZoom: object["maxzoom"]?.doubleValue ?? 24, filter: object["filter"], textField: field,
                textTransform: layout["text-transform"], writingMode: layout["text-writing-mode"], fontStacks: stacks)
            var why: String?
            if source == nil {
                why = "its source '\(sourceName)' is not a tiled source of the pack, so its labels cannot be read from tiles"
            } else {
                do {
                    _ = try LabelProgram(layer)
                } catch {
                    why = "its \(error.description) is not evaluated by the glyph scan"
                }
            }
            if let why {
                let fallback = GlyphPolicy.usedFallback
                for url in GlyphRanges.urls(template: template, fontStacks: stacks, policy: fallback) { known.insert(url) }
                let names = stacks.map { "'\($0.joined(separator: ","))'" }.joined(separator: ", ")
                notes.append(PlanNote(subject: subject, message: "glyphs \"used\": layer '\(id)': \(why); its font "
                                      + "\(stacks.count == 1 ? "stack \(names) gets" : "stacks \(names) get") the "
                                      + "\(GlyphRanges.ranges(for: fallback).count) ranges of \"\(fallback.rawValue)\""))
                continue
            }
            layers.append(layer)
        }
        let stacks = FontStacks.fontStacks(in: style)
        for url in GlyphRanges.urls(template: template, fontStacks: stacks, policy: .used) { known.insert(url) }
        return Outcome(demand: GlyphDemand(template: template, layers: layers, fontStacks: stacks),
                       knownResources: known.sorted().map { ResourceRef(url: $0, kind: .glyphs) }, notes: notes)
    }
}
