import ProvisionFoundation
import ProvisionModel

/// The font stacks a style's symbol layers draw text with (MapLibre's `Parser::fontStacks()`).
public enum FontStacks {
    /// The stack a symbol layer with text but no `text-font` uses.
    public static let defaultStack = ["Open Sans Regular", "Arial Unicode MS Regular"]

    /// Every font stack the style's symbol layers can use, sorted and unique.
    ///
    /// Only symbol layers MapLibre's parser keeps (see `parsedLayers(in:)`) with a `text-field`
    /// count (a legacy `"{token}"` string is a text field like any other); visibility and zoom
    /// limits are ignored, as MapLibre's offline download ignores them. A constant `text-font`
    /// adds that stack, a missing one adds `defaultStack`, an expression or legacy function adds
    /// each literal stack it can output, stopping at the first output that is not a literal. A
    /// `text-font` MapLibre would reject (not an array of strings, a malformed expression, an
    /// `interpolate`, which cannot output font stacks) adds nothing, and an empty stack is never
    /// added (it names no font file).
    public static func fontStacks(in style: JSONValue) -> [[String]] {
        var stacks = Set<[String]>()
        for layer in parsedLayers(in: style) {
            guard layer["type"]?.stringValue == "symbol", let layout = layer["layout"]?.objectValue else { continue }
            guard let field = layout["text-field"], field != .null else { continue }
            for stack in stacksOfTextFont(layout["text-font"]) where !stack.isEmpty {
                stacks.insert(stack)
            }
        }
        return sorted(stacks)
    }

    /// The layers MapLibre Native's style parser keeps, in style order: objects with a string
    /// `id` not used by an earlier layer and a string `type`, with a string `source` unless they
    /// are `background` layers. Legacy `ref` layers are left out: they share the layout (and so
    /// the fonts) of the layer they refer to. A layer whose `source` the style does not define
    /// is kept, as the parser keeps it: it draws nothing, but its fonts are still downloaded.
    public static func parsedLayers(in style: JSONValue) -> [JSONObject] {
        var ids = Set<String>()
        var kept: [JSONObject] = []
        for value in style["layers"]?.arrayValue ?? [] {
            guard let layer = value.objectValue, let id = layer["id"]?.stringValue, ids.insert(id).inserted else { continue }
            guard layer["ref"] == nil, let type = layer["type"]?.stringValue else { continue }
            guard type == "background" || layer["source"]?.stringValue != nil else { continue }
            kept.append(layer)
        }
        return kept
    }

    /// Font stacks in the order of a C++ `std::set<std::vector<std::string>>`: lexicographic over
    /// the fonts, each compared by its UTF-8 bytes, a prefix before its extensions.
    public static func sorted<S: Sequence>(_ stacks: S) -> [[String]] where S.Element == [String] {
        stacks.sorted { a, b in
            a.lexicographicallyPrecedes(b) { x, y in x.utf8.lexicographicallyPrecedes(y.utf8) }
        }
    }

    /// The stacks one layer's `text-font` value contributes.
    static func stacksOfTextFont(_ value: JSONValue?) -> [[String]] {
        guard let value, value != .null else { return [defaultStack] }
        let outputs: [[String]?]
        switch value {
        case .array(let items) where isExpression(items):
            guard let possible = possibleOutputs(value) else { return [] }
            outputs = possible
        case .array:
            guard let constant = stringArray(value) else { return [] }
            return [constant]
        case .object(let function):
            guard let possible = functionOutputs(function) else { return [] }
            outputs = possible
        default:
            return []
        }
        var result: [[String]] = []
        for output in outputs {
            guard let output else { break } // MapLibre warns and skips the rest of the layer.
            result.append(output)
        }
        return result
    }

    /// The possible outputs of a font expression in document order: a stack for each literal,
    /// nil for an output only known at render time; nil overall when the expression is malformed.
    static func possibleOutputs(_ expression: JSONValue) -> [[String]?]? {
        guard case .array(let items) = expression, isExpression(items), let op = items.first?.stringValue else {
            return nil
        }
        let args = Array(items.dropFirst())
        func outputs(_ values: [JSONValue]) -> [[String]?]? {
            var result: [[String]?] = []
            for value in values {
                guard let sub = possibleOutputs(value) else { return nil }
                result += sub
            }
            return result
        }
        switch op {
        case "literal":
            guard args.count == 1, let stack = stringArray(args[0]) else { return nil }
            return [stack]
        case "match":
            // input, (label, output)+, fallback
            guard args.count >= 4, args.count % 2 == 0 else { return nil }
            let branchOutputs = stride(from: 2, to: args.count - 1, by: 2).map { args[$0] }
            return outputs(branchOutputs + [args[args.count - 1]])
        case "case":
            // (condition, output)+, fallback
            guard args.count >= 3, args.count % 2 == 1 else { return nil }
            let branchOutputs = stride(from: 1, to: args.count - 1, by: 2).map { args[$0] }
            return outputs(branchOutputs + [args[args.count - 1]])
        case "step":
            // input, output0, (stop, output)*
            guard args.count >= 2, args.count % 2 == 0 else { return nil }
            return outputs(stride(from: 1, to: args.count, by: 2).map { args[$0] })
        case "coalesce":
            guard !args.isEmpty else { return nil }
            return outputs(args)
        case "let":
            guard args.count >= 3, args.count % 2 == 1 else { return nil }
            return outputs([args[args.count - 1]])
        case "array":
            guard let last = args.last else { return nil }
            return outputs([last])
        default:
            return [nil]
        }
    }

    /// The outputs of a legacy function object (`{"stops": [[zoom, [fonts]], …], "default": …}`).
    static func functionOutputs(_ function: JSONObject) -> [[String]?]? {
        guard let stops = function["stops"]?.arrayValue, !stops.isEmpty else { return nil }
        var result: [[String]?] = []
        for stop in stops {
            guard let pair = stop.arrayValue, pair.count == 2, let stack = stringArray(pair[1]) else { return nil }
            result.append(stack)
        }
        if let fallback = function["default"] {
            guard let stack = stringArray(fallback) else { return nil }
            result.append(stack)
        }
        return result
    }

    private static func stringArray(_ value: JSONValue) -> [String]? {
        guard let items = value.arrayValue else { return nil }
        var strings: [String] = []
        for item in items {
            guard let s = item.stringValue else { return nil }
            strings.append(s)
        }
        return strings
    }

    /// Whether an array is an expression: its first element names an expression operator.
    static func isExpression(_ items: [JSONValue]) -> Bool {
        guard let name = items.first?.stringValue else { return false }
        return expressionOperators.contains(name)
    }

    /// The operator names of the MapLibre Style Specification's expressions.
    static let expressionOperators: Set<String> = [
        "!", "!=", "%", "*", "+", "-", "/", "<", "<=", "==", ">", ">=", "^", "abs", "accumulated", "acos", "all",
        "any", "array", "asin", "at", "atan", "boolean", "case", "ceil", "coalesce", "collator", "concat", "cos",
        "distance", "downcase", "e", "feature-state", "floor", "format", "geometry-type", "get", "has",
        "heatmap-density", "id", "image", "in", "index-of", "interpolate", "interpolate-hcl", "interpolate-lab",
        "is-supported-script", "length", "let", "line-progress", "literal", "ln", "ln2", "log10", "log2", "match",
        "max", "min", "number", "number-format", "object", "pi", "properties", "resolved-locale", "rgb", "rgba",
        "round", "sin", "slice", "split", "sqrt", "step", "string", "tan", "to-boolean", "to-color", "to-number",
        "to-rgba", "to-string", "typeof", "upcase", "var", "within", "zoom",
    ]
}
