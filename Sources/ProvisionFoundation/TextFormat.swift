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

/// Human byte sizes, the one unit style every text uses: 1024-based units (`B`, `KiB`, `MiB`, …)
/// with one decimal, bytes below 1 KiB exact (`512 B`, `1.5 KiB`, `337.7 KiB`).
///
/// Why one formatter: the plan, apply, audit, merge and export texts and the progress line sit
/// side by side in one log; a size printed as `345,829 bytes` in one and `337.7 KiB` in another
/// reads as two different sizes.
public enum ByteFormat {
    /// `1536` → `1.5 KiB`, `512` → `512 B`.
    public static func string(_ bytes: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]
        var value = Double(bytes.magnitude)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        let sign = bytes < 0 ? "-" : ""
        guard unit > 0 else { return "\(sign)\(bytes.magnitude) B" }
        // 1023.96 KiB rounds to "1024.0 KiB" at one decimal: show it as the next unit.
        if (value * 10).rounded() >= 10240, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return sign + String(format: "%.1f", value) + " " + units[unit]
    }

    /// `1.5 KiB`, or `~1.5 KiB` when `estimated`.
    public static func string(_ bytes: Int64, estimated: Bool) -> String {
        (estimated ? "~" : "") + string(bytes)
    }

    /// `337.7 KiB (345,829 bytes)`: the readable size with the exact count beside it, for
    /// messages that compare a size with a limit given in bytes.
    public static func exact(_ bytes: Int64) -> String {
        bytes < 1024 ? string(bytes) : "\(string(bytes)) (\(grouped(Int(clamping: bytes))) bytes)"
    }
}

/// The progress line's rate and time left.
public enum TextFormat {
    /// `15,613/s`: a rate per second, whole and grouped.
    public static func rate(_ perSecond: Double) -> String {
        "\(grouped(perSecond.isFinite ? Int(perSecond.rounded(.down)) : 0))/s"
    }

    /// `45s`, `2m 5s`, `1h 3m`: a duration in whole seconds, as the progress line's eta shows it.
    public static func duration(seconds: Int) -> String {
        if seconds < 60 { return "\(seconds)s" }
        if seconds < 3600 { return "\(seconds / 60)m \(seconds % 60)s" }
        return "\(grouped(seconds / 3600))h \(seconds % 3600 / 60)m"
    }
}
