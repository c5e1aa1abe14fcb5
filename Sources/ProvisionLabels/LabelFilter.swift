import ProvisionFoundation
import ProvisionModel

/// A layer `filter` as an expression: expression filters as written, legacy filters
/// (`["==", "class", "city"]`, `["in", "$type", "Point"]`, `["!has", "name"]`, `["none", …]` …)
/// converted with their legacy meaning.
public enum LabelFilter {
    /// The expression `filter` evaluates to; nil for no filter (every feature passes).
    public static func compile(_ filter: JSONValue?) throws(UnsupportedExpression) -> Expression? {
        guard let filter, filter != .null else { return nil }
        if case .bool(let b) = filter { return .literal(.bool(b)) }
        guard case .array = filter else { throw UnsupportedExpression("a filter that is not an array") }
        return isExpression(filter) ? try Expression.compile(filter) : try legacy(filter)
    }

    /// Whether a filter is written as an expression, by the style specification's rule
    /// (`isExpressionFilter`): the legacy forms are `["op", key, value]` comparisons with a string
    /// key, `in`/`!in` over a string key, `!has`, `none`, and `all`/`any` of legacy filters.
    public static func isExpression(_ filter: JSONValue) -> Bool {
        guard case .array(let items) = filter, let op = items.first?.stringValue else { return false }
        switch op {
        case "has":
            return items.count >= 2 && items[1] != .string("$id") && items[1] != .string("$type")
        case "in":
            return items.count >= 3 && (items[1].stringValue == nil || items[2].arrayValue != nil)
        case "!in", "!has", "none":
            return false
        case "==", "!=", ">", ">=", "<", "<=":
            return items.count != 3 || items[1].arrayValue != nil || items[2].arrayValue != nil
        case "any", "all":
            return items.dropFirst().allSatisfy { sub in
                if case .bool = sub { return true }
                return isExpression(sub)
            }
        default:
            return true
        }
    }

    /// A legacy filter as an expression.
    static func legacy(_ filter: JSONValue) throws(UnsupportedExpression) -> Expression {
        guard case .array(let items) = filter, let op = items.first?.stringValue else {
            if case .bool(let b) = filter { return .literal(.bool(b)) }
            throw UnsupportedExpression("a legacy filter that is not an array")
        }
        let args = Array(items.dropFirst())
        func key(_ i: Int) throws(UnsupportedExpression) -> Expression {
            guard i < args.count, let name = args[i].stringValue else {
                throw UnsupportedExpression("a legacy \"\(op)\" filter without a key")
            }
            switch name {
            case "$type": return .geometryType
            case "$id": return .id
            default: return .get(.literal(.string(name)), from: nil)
            }
        }
        func subfilters() throws(UnsupportedExpression) -> [Expression] {
            var out: [Expression] = []
            for sub in args { out.append(try legacy(sub)) }
            return out
        }
        switch op {
        case "==", "!=", "<", "<=", ">", ">=":
            guard args.count == 2 else { throw UnsupportedExpression("a legacy \"\(op)\" filter with \(args.count) arguments") }
            let comparison = Expression.compare(op, try key(0), .literal(ExpressionValue(json: args[1])))
            // Ordering unlike types is false in a legacy filter, not an error.
            return op == "==" || op == "!=" ? comparison : .coalesce([comparison, .literal(.bool(false))])
        case "in", "!in":
            let k = try key(0)
            let any = Expression.any(args.dropFirst().map { .compare("==", k, .literal(ExpressionValue(json: $0))) })
            return op == "in" ? any : .not(any)
        case "has", "!has":
            let name = args.first?.stringValue ?? ""
            let has: Expression
            switch name {
            case "$type": has = .literal(.bool(true))
            case "$id": has = .compare("!=", .id, .literal(.null))
            default: has = .has(.literal(.string(name)), from: nil)
            }
            return op == "has" ? has : .not(has)
        case "all": return .all(try subfilters())
        case "any": return .any(try subfilters())
        case "none": return .not(.any(try subfilters()))
        default:
            throw UnsupportedExpression("the legacy filter \"\(op)\"")
        }
    }
}
