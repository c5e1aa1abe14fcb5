/// `n` and its noun, in the number the count asks for, with thousands grouped: `1 tile`,
/// `0 tiles`, `1,573 tiles`, `1 style pack`, `2 glyph ranges`.
///
/// The plural adds `s` to the singular unless `plural` is given (`plural(n, "was", "were")`).
/// Every human text (renderers, CLI messages) counts through this, so none says "1 tiles".
public func plural(_ n: Int, _ singular: String, _ plural: String? = nil) -> String {
    "\(grouped(n)) \(n == 1 ? singular : plural ?? singular + "s")"
}

/// `n` with its thousands grouped by commas, as the texts print counts: `1573` → `1,573`.
public func grouped(_ n: Int) -> String {
    let digits = String(n.magnitude)
    var out = n < 0 ? "-" : ""
    out.reserveCapacity(digits.count + digits.count / 3 + 1)
    for (i, digit) in digits.enumerated() {
        if i > 0, (digits.count - i) % 3 == 0 { out.append(",") }
        out.append(digit)
    }
    return out
}

/// The non-empty parts joined as a sentence lists them: `a`, `a and b`, `a, b and c`.
public func listed(_ parts: [String]) -> String {
    let parts = parts.filter { !$0.isEmpty }
    guard parts.count > 1, let last = parts.last else { return parts.first ?? "" }
    return parts.dropLast().joined(separator: ", ") + " and " + last
}

/// The counts that are not zero, each with its noun, listed (`12 tiles and 1 resource`); empty
/// when every count is zero. `isSingular` says whether the whole is one thing (for the verb).
public func listedCounts(_ counts: [(Int, String)]) -> (text: String, isSingular: Bool) {
    let nonzero = counts.filter { $0.0 != 0 }
    let text = listed(nonzero.map { plural($0.0, $0.1) })
    return (text, nonzero.reduce(0) { $0 + $1.0 } == 1)
}
