import Foundation
import ProvisionFoundation
import ProvisionModel

/// A label layer compiled for evaluation: which features it draws at a zoom (its zoom range and
/// filter) and the text each one gets (its `text-field`).
public struct LabelProgram: Sendable {
    /// The layer it was compiled from.
    public let layer: LabelLayer
    let filter: Expression?
    /// The ways the text can be made: one for an expression or a token string; every output of
    /// a legacy function (each is evaluated, as the feature's zoom or value may pick any).
    let texts: [Text]
    /// Whether the filter or the text depends on the zoom.
    public let usesZoom: Bool

    enum Text: Sendable {
        case expression(Expression)
        /// A legacy string with `{token}` fields.
        case tokens([TokenPart])
    }

    enum TokenPart: Sendable, Equatable {
        case text(String)
        case property(String)
    }

    /// Compiles `layer`.
    ///
    /// - Throws: `UnsupportedExpression` when its filter or text uses what the evaluator does not.
    public init(_ layer: LabelLayer) throws(UnsupportedExpression) {
        self.layer = layer
        do {
            filter = try LabelFilter.compile(layer.filter)
        } catch {
            throw UnsupportedExpression("filter: \(error.description)")
        }
        do {
            texts = try Self.texts(layer.textField)
        } catch {
            throw UnsupportedExpression("text-field: \(error.description)")
        }
        usesZoom = (filter?.usesZoom ?? false) || texts.contains { text in
            if case .expression(let e) = text { return e.usesZoom }
            return false
        }
    }

    /// The texts of a `text-field` value: a token string, an expression, or a legacy function.
    static func texts(_ value: JSONValue) throws(UnsupportedExpression) -> [Text] {
        switch value {
        case .string(let s): return [.tokens(tokens(s))]
        case .array: return [.expression(try Expression.compile(value))]
        case .object(let function):
            var outputs: [Text] = []
            if function["type"]?.stringValue == "identity", let property = function["property"]?.stringValue {
                outputs.append(.tokens([.property(property)]))
            }
            for stop in function["stops"]?.arrayValue ?? [] {
                guard let pair = stop.arrayValue, pair.count == 2 else { throw UnsupportedExpression("a function stop that is not a pair") }
                outputs += try texts(pair[1])
            }
            if let fallback = function["default"] { outputs += try texts(fallback) }
            guard !outputs.isEmpty else { throw UnsupportedExpression("a function without stops") }
            return outputs
        case .null: return []
        default: return [.tokens([.text(ExpressionValue(json: value).stringValue)])]
        }
    }

    /// The parts of a legacy token string: `{name}` is the property `name`, the rest is text.
    static func tokens(_ s: String) -> [TokenPart] {
        var parts: [TokenPart] = []
        var rest = Substring(s)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            if open > rest.startIndex { parts.append(.text(String(rest[..<open]))) }
            parts.append(.property(String(rest[rest.index(after: open)..<close])))
            rest = rest[rest.index(after: close)...]
        }
        if !rest.isEmpty { parts.append(.text(String(rest))) }
        return parts
    }

    /// Whether the layer is laid out at integer zoom `z`: a tile laid out at `z` is drawn from
    /// `z` up to (not including) `z + 1`, and the layer is drawn from its `minzoom` up to (not
    /// including) its `maxzoom`.
    public func isVisible(atZoom z: Int) -> Bool {
        Double(z) + 1 > layer.minZoom && Double(z) < layer.maxZoom
    }

    /// The text sections `feature` is labelled with at zoom `z` (empty when the filter refuses
    /// it or no text comes out). A filter that fails is false and a text that fails is none, as
    /// in MapLibre.
    public func sections(for feature: TileFeature, zoom z: Int) -> [FormattedSection] {
        let context = EvaluationContext(feature: feature, zoom: Double(z))
        if let filter {
            // A filter that fails to evaluate is false, as in MapLibre.
            guard case .bool(true)? = try? filter.evaluate(context) else { return [] }
        }
        var out: [FormattedSection] = []
        for text in texts {
            switch text {
            case .tokens(let parts):
                let s = parts.map { part -> String in
                    switch part {
                    case .text(let t): return t
                    case .property(let name): return feature.properties[name]?.stringValue ?? ""
                    }
                }.joined()
                if !s.isEmpty { out.append(FormattedSection(text: s)) }
            case .expression(let expression):
                switch (try? expression.evaluate(context)) ?? .null {  // an error is no text, as in MapLibre
                case .formatted(let sections): out += sections.filter { !$0.text.isEmpty }
                case .null: continue
                case let value:
                    let s = value.stringValue
                    if !s.isEmpty { out.append(FormattedSection(text: s)) }
                }
            }
        }
        return out
    }
}
