import Foundation
import ProvisionFoundation
import ProvisionModel

/// Why an expression is not evaluated here: an operator (or a form of one) the label evaluator
/// does not implement. A layer with one is never guessed at: its fonts get every range.
public struct UnsupportedExpression: Error, Equatable, CustomStringConvertible {
    public var description: String

    /// An unsupported expression, `description` saying which part.
    public init(_ description: String) { self.description = description }
}

/// A failure while evaluating (a type assertion that fails, a comparison of unlike types): as
/// in MapLibre, a filter that fails is false and a text that fails is no text.
struct EvaluationError: Error {}

/// What an expression is evaluated against.
public struct EvaluationContext {
    /// The feature.
    public var feature: TileFeature
    /// The zoom the layout is made at.
    public var zoom: Double

    /// The context of `feature` at `zoom`.
    public init(feature: TileFeature, zoom: Double) {
        self.feature = feature
        self.zoom = zoom
    }
}

/// A compiled style expression over feature properties: the operators labels and filters use.
///
/// Supported: `literal`, `get`, `has`, `properties`, `id`, `geometry-type`, `zoom`, `==`, `!=`,
/// `<`, `<=`, `>`, `>=`, `!`, `all`, `any`, `in`, `case`, `match`, `coalesce`, `step`, `let`,
/// `var`, `concat`, `format`, `image`, `to-string`, `to-number`, `to-boolean`, `string`,
/// `number`, `boolean`, `typeof`, `length`, `upcase`, `downcase`, and the numeric `+`, `-`, `*`,
/// `/`, `%`, `^`, `min`, `max`, `abs`, `ceil`, `floor`, `round`, `sqrt`. Anything else (for
/// example `number-format`, `interpolate`, `collator`, `within`) is `UnsupportedExpression`.
public indirect enum Expression: Sendable {
    case literal(ExpressionValue)
    case get(Expression, from: Expression?)
    case has(Expression, from: Expression?)
    case properties
    case id
    case geometryType
    case zoom
    case compare(String, Expression, Expression)
    case not(Expression)
    case all([Expression])
    case any([Expression])
    case contains(needle: Expression, haystack: Expression)
    case `case`([(Expression, Expression)], otherwise: Expression)
    case match(Expression, [([ExpressionValue], Expression)], otherwise: Expression)
    case coalesce([Expression])
    case step(Expression, first: Expression, stops: [(Double, Expression)])
    case `let`([(String, Expression)], Expression)
    case variable(String)
    case concat([Expression])
    case format([(Expression, fontStack: [String]?)])
    case image(Expression)
    case toString(Expression)
    case toNumber([Expression])
    case toBoolean(Expression)
    case assert(String, [Expression])
    case typeOf(Expression)
    case length(Expression)
    case upcase(Expression)
    case downcase(Expression)
    case arithmetic(String, [Expression])

    /// Compiles `json`: an expression array, or a literal (a string, number, boolean or null).
    public static func compile(_ json: JSONValue) throws(UnsupportedExpression) -> Expression {
        guard case .array(let items) = json else {
            if case .object = json { throw UnsupportedExpression("an object outside \"literal\"") }
            return .literal(ExpressionValue(json: json))
        }
        guard let op = items.first?.stringValue else {
            throw UnsupportedExpression("an array that is not an expression (wrap literal arrays in \"literal\")")
        }
        let args = Array(items.dropFirst())
        func arg(_ i: Int) throws(UnsupportedExpression) -> Expression {
            guard i < args.count else { throw UnsupportedExpression("\"\(op)\" with \(args.count) arguments") }
            return try compile(args[i])
        }
        func all() throws(UnsupportedExpression) -> [Expression] {
            var out: [Expression] = []
            for a in args { out.append(try compile(a)) }
            return out
        }
        func count(_ range: ClosedRange<Int>) throws(UnsupportedExpression) {
            guard range.contains(args.count) else { throw UnsupportedExpression("\"\(op)\" with \(args.count) arguments") }
        }
        switch op {
        case "literal":
            try count(1...1)
            return .literal(ExpressionValue(json: args[0]))
        case "get":
            try count(1...2)
            return .get(try arg(0), from: args.count == 2 ? try arg(1) : nil)
        case "has":
            try count(1...2)
            return .has(try arg(0), from: args.count == 2 ? try arg(1) : nil)
        case "properties": try count(0...0); return .properties
        case "id": try count(0...0); return .id
        case "geometry-type": try count(0...0); return .geometryType
        case "zoom": try count(0...0); return .zoom
        case "==", "!=", "<", "<=", ">", ">=":
            // A third argument is a collator, which compares by locale: not evaluated here.
            try count(2...2)
            return .compare(op, try arg(0), try arg(1))
        case "!":
            try count(1...1)
            return .not(try arg(0))
        case "all": return .all(try all())
        case "any": return .any(try all())
        case "in":
            try count(2...2)
            return .contains(needle: try arg(0), haystack: try arg(1))
        case "case":
            guard args.count >= 3, args.count % 2 == 1 else { throw UnsupportedExpression("\"case\" with \(args.count) arguments") }
            var branches: [(Expression, Expression)] = []
            for i in stride(from: 0, to: args.count - 1, by: 2) { branches.append((try arg(i), try arg(i + 1))) }
            return .case(branches, otherwise: try arg(args.count - 1))
        case "match":
            guard args.count >= 4, args.count % 2 == 0 else { throw UnsupportedExpression("\"match\" with \(args.count) arguments") }
            var branches: [([ExpressionValue], Expression)] = []
            for i in stride(from: 1, to: args.count - 1, by: 2) {
                let labels: [ExpressionValue]
                switch args[i] {
                case .array(let many): labels = many.map(ExpressionValue.init(json:))
                default: labels = [ExpressionValue(json: args[i])]
                }
                branches.append((labels, try arg(i + 1)))
            }
            return .match(try arg(0), branches, otherwise: try arg(args.count - 1))
        case "coalesce":
            guard !args.isEmpty else { throw UnsupportedExpression("\"coalesce\" without arguments") }
            return .coalesce(try all())
        case "step":
            guard args.count >= 2, args.count % 2 == 0 else { throw UnsupportedExpression("\"step\" with \(args.count) arguments") }
            var stops: [(Double, Expression)] = []
            for i in stride(from: 2, to: args.count, by: 2) {
                guard let stop = args[i].doubleValue else { throw UnsupportedExpression("a \"step\" stop that is not a number") }
                stops.append((stop, try arg(i + 1)))
            }
            return .step(try arg(0), first: try arg(1), stops: stops)
        case "let":
            guard args.count >= 3, args.count % 2 == 1 else { throw UnsupportedExpression("\"let\" with \(args.count) arguments") }
            var bindings: [(String, Expression)] = []
            for i in stride(from: 0, to: args.count - 1, by: 2) {
                guard let name = args[i].stringValue else { throw UnsupportedExpression("a \"let\" name that is not a string") }
                bindings.append((name, try arg(i + 1)))
            }
            return .let(bindings, try arg(args.count - 1))
        case "var":
            guard args.count == 1, let name = args[0].stringValue else { throw UnsupportedExpression("\"var\" without a name") }
            return .variable(name)
        case "concat": return .concat(try all())
        case "format": return try compileFormat(args)
        case "image":
            try count(1...1)
            return .image(try arg(0))
        case "to-string":
            try count(1...1)
            return .toString(try arg(0))
        case "to-number": return .toNumber(try all())
        case "to-boolean":
            try count(1...1)
            return .toBoolean(try arg(0))
        case "string", "number", "boolean":
            guard !args.isEmpty else { throw UnsupportedExpression("\"\(op)\" without arguments") }
            return .assert(op, try all())
        case "typeof":
            try count(1...1)
            return .typeOf(try arg(0))
        case "length":
            try count(1...1)
            return .length(try arg(0))
        case "upcase":
            try count(1...1)
            return .upcase(try arg(0))
        case "downcase":
            try count(1...1)
            return .downcase(try arg(0))
        case "+", "*", "min", "max":
            guard !args.isEmpty else { throw UnsupportedExpression("\"\(op)\" without arguments") }
            return .arithmetic(op, try all())
        case "-":
            try count(1...2)
            return .arithmetic(op, try all())
        case "/", "%", "^":
            try count(2...2)
            return .arithmetic(op, try all())
        case "abs", "ceil", "floor", "round", "sqrt":
            try count(1...1)
            return .arithmetic(op, try all())
        default:
            throw UnsupportedExpression("\"\(op)\"")
        }
    }

    /// `["format", input, options?, input, options?, …]`: an options object may name a literal
    /// `text-font` for the section before it.
    private static func compileFormat(_ args: [JSONValue]) throws(UnsupportedExpression) -> Expression {
        var sections: [(Expression, fontStack: [String]?)] = []
        for value in args {
            if case .object(let options) = value {
                guard !sections.isEmpty else { throw UnsupportedExpression("\"format\" options before any section") }
                if let font = options["text-font"] {
                    guard let stack = literalStringArray(font) else {
                        throw UnsupportedExpression("a \"format\" text-font that is not a literal array of fonts")
                    }
                    sections[sections.count - 1].fontStack = stack
                }
                continue
            }
            sections.append((try compile(value), nil))
        }
        return .format(sections)
    }

    private static func literalStringArray(_ value: JSONValue) -> [String]? {
        var value = value
        if case .array(let items) = value, items.first?.stringValue == "literal", items.count == 2 { value = items[1] }
        guard let items = value.arrayValue else { return nil }
        let fonts = items.compactMap(\.stringValue)
        return fonts.count == items.count ? fonts : nil
    }

    /// Whether the value depends on the zoom.
    public var usesZoom: Bool {
        switch self {
        case .zoom: return true
        case .literal, .properties, .id, .geometryType, .variable: return false
        case .get(let a, let b), .has(let a, let b): return a.usesZoom || (b?.usesZoom ?? false)
        case .compare(_, let a, let b), .contains(let a, let b): return a.usesZoom || b.usesZoom
        case .not(let a), .image(let a), .toString(let a), .toBoolean(let a), .typeOf(let a), .length(let a),
             .upcase(let a), .downcase(let a):
            return a.usesZoom
        case .all(let xs), .any(let xs), .coalesce(let xs), .concat(let xs), .toNumber(let xs), .assert(_, let xs),
             .arithmetic(_, let xs):
            return xs.contains { $0.usesZoom }
        case .case(let branches, let otherwise):
            return otherwise.usesZoom || branches.contains { $0.0.usesZoom || $0.1.usesZoom }
        case .match(let input, let branches, let otherwise):
            return input.usesZoom || otherwise.usesZoom || branches.contains { $0.1.usesZoom }
        case .step(let input, let first, let stops):
            return input.usesZoom || first.usesZoom || stops.contains { $0.1.usesZoom }
        case .let(let bindings, let body): return body.usesZoom || bindings.contains { $0.1.usesZoom }
        case .format(let sections): return sections.contains { $0.0.usesZoom }
        }
    }

    /// The value in `context`.
    public func evaluate(_ context: EvaluationContext) throws -> ExpressionValue {
        var scope: [String: ExpressionValue] = [:]
        return try evaluate(context, scope: &scope)
    }

    func evaluate(_ c: EvaluationContext, scope: inout [String: ExpressionValue]) throws -> ExpressionValue {
        switch self {
        case .literal(let value): return value
        case .properties: return .object(c.feature.properties)
        case .id: return c.feature.id.map { .number(Double($0)) } ?? .null
        case .geometryType: return .string(c.feature.geometryTypeName)
        case .zoom: return .number(c.zoom)
        case .get(let key, let from):
            guard case .string(let name) = try key.evaluate(c, scope: &scope) else { throw EvaluationError() }
            let object = try from.map { try $0.evaluate(c, scope: &scope) } ?? .object(c.feature.properties)
            guard case .object(let members) = object else { return .null }
            return members[name] ?? .null
        case .has(let key, let from):
            guard case .string(let name) = try key.evaluate(c, scope: &scope) else { throw EvaluationError() }
            let object = try from.map { try $0.evaluate(c, scope: &scope) } ?? .object(c.feature.properties)
            guard case .object(let members) = object else { return .bool(false) }
            return .bool(members[name] != nil)
        case .compare(let op, let a, let b):
            return .bool(try Self.compare(op, try a.evaluate(c, scope: &scope), try b.evaluate(c, scope: &scope)))
        case .not(let a):
            guard case .bool(let b) = try a.evaluate(c, scope: &scope) else { throw EvaluationError() }
            return .bool(!b)
        case .all(let xs):
            for x in xs {
                guard case .bool(let b) = try x.evaluate(c, scope: &scope) else { throw EvaluationError() }
                if !b { return .bool(false) }
            }
            return .bool(true)
        case .any(let xs):
            for x in xs {
                guard case .bool(let b) = try x.evaluate(c, scope: &scope) else { throw EvaluationError() }
                if b { return .bool(true) }
            }
            return .bool(false)
        case .contains(let needle, let haystack):
            let n = try needle.evaluate(c, scope: &scope)
            switch try haystack.evaluate(c, scope: &scope) {
            case .array(let items): return .bool(items.contains(n))
            case .string(let s):
                guard case .string(let sub) = n else { throw EvaluationError() }
                return .bool(sub.isEmpty || s.contains(sub))
            default: throw EvaluationError()
            }
        case .case(let branches, let otherwise):
            for (condition, output) in branches {
                guard case .bool(let b) = try condition.evaluate(c, scope: &scope) else { throw EvaluationError() }
                if b { return try output.evaluate(c, scope: &scope) }
            }
            return try otherwise.evaluate(c, scope: &scope)
        case .match(let input, let branches, let otherwise):
            let value = try input.evaluate(c, scope: &scope)
            for (labels, output) in branches where labels.contains(value) { return try output.evaluate(c, scope: &scope) }
            return try otherwise.evaluate(c, scope: &scope)
        case .coalesce(let xs):
            for x in xs {
                // A failing argument counts as null, as MapLibre's coalesce catches errors.
                let value = (try? x.evaluate(c, scope: &scope)) ?? .null
                if value != .null { return value }
            }
            return .null
        case .step(let input, let first, let stops):
            guard case .number(let x) = try input.evaluate(c, scope: &scope) else { throw EvaluationError() }
            var chosen = first
            for (stop, output) in stops where x >= stop { chosen = output }
            return try chosen.evaluate(c, scope: &scope)
        case .let(let bindings, let body):
            let saved = scope
            for (name, value) in bindings { scope[name] = try value.evaluate(c, scope: &scope) }
            defer { scope = saved }
            return try body.evaluate(c, scope: &scope)
        case .variable(let name):
            guard let value = scope[name] else { throw EvaluationError() }
            return value
        case .concat(let xs):
            var text = ""
            for x in xs { text += try x.evaluate(c, scope: &scope).stringValue }
            return .string(text)
        case .format(let sections):
            var out: [FormattedSection] = []
            for (section, font) in sections {
                switch try section.evaluate(c, scope: &scope) {
                case .formatted(let inner): out += inner
                case let value: out.append(FormattedSection(text: value.stringValue, fontStack: font))
                }
            }
            return .formatted(out)
        case .image:
            return .formatted([])  // an image section draws no glyph
        case .toString(let a): return .string(try a.evaluate(c, scope: &scope).stringValue)
        case .toNumber(let xs):
            for x in xs {
                switch try x.evaluate(c, scope: &scope) {
                case .number(let d): return .number(d)
                case .null: return .number(0)
                case .bool(let b): return .number(b ? 1 : 0)
                case .string(let s):
                    if let d = Double(s.trimmingCharacters(in: .whitespaces)) { return .number(d) }
                default: continue
                }
            }
            throw EvaluationError()
        case .toBoolean(let a): return .bool(try a.evaluate(c, scope: &scope).truthy)
        case .assert(let type, let xs):
            for x in xs {
                let value = try x.evaluate(c, scope: &scope)
                if value.typeName == type { return value }
            }
            throw EvaluationError()
        case .typeOf(let a): return .string(try a.evaluate(c, scope: &scope).typeName)
        case .length(let a):
            switch try a.evaluate(c, scope: &scope) {
            case .string(let s): return .number(Double(s.unicodeScalars.count))
            case .array(let items): return .number(Double(items.count))
            default: throw EvaluationError()
            }
        case .upcase(let a): return .string(try a.evaluate(c, scope: &scope).stringValue.uppercased())
        case .downcase(let a): return .string(try a.evaluate(c, scope: &scope).stringValue.lowercased())
        case .arithmetic(let op, let xs):
            var numbers: [Double] = []
            for x in xs {
                guard case .number(let d) = try x.evaluate(c, scope: &scope) else { throw EvaluationError() }
                numbers.append(d)
            }
            return .number(Self.arithmetic(op, numbers))
        }
    }

    /// The numeric operators (their arities checked when compiled).
    static func arithmetic(_ op: String, _ n: [Double]) -> Double {
        switch op {
        case "+": return n.reduce(0, +)
        case "*": return n.reduce(1, *)
        case "min": return n.min() ?? .nan
        case "max": return n.max() ?? .nan
        case "-": return n.count == 1 ? -n[0] : n[0] - n[1]
        case "/": return n[0] / n[1]
        case "%": return n[0].truncatingRemainder(dividingBy: n[1])
        case "^": return pow(n[0], n[1])
        case "abs": return abs(n[0])
        case "ceil": return n[0].rounded(.up)
        case "floor": return n[0].rounded(.down)
        case "round": return n[0].rounded(.toNearestOrAwayFromZero)
        default: return n[0].squareRoot()
        }
    }

    /// `==`/`!=` compare any two values (unlike types are unequal); the ordering operators
    /// compare two numbers or two strings and fail otherwise.
    static func compare(_ op: String, _ a: ExpressionValue, _ b: ExpressionValue) throws -> Bool {
        switch op {
        case "==": return a == b
        case "!=": return a != b
        default:
            let order: Bool?
            switch (a, b) {
            case (.number(let x), .number(let y)):
                order = op == "<" ? x < y : op == "<=" ? x <= y : op == ">" ? x > y : x >= y
            case (.string(let x), .string(let y)):
                order = op == "<" ? x < y : op == "<=" ? x <= y : op == ">" ? x > y : x >= y
            default:
                order = nil
            }
            guard let order else { throw EvaluationError() }
            return order
        }
    }
}
