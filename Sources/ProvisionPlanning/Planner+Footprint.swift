import Foundation
import ProvisionModel

/// The resources of the plan's footprint: what each desired row links after the apply.
extension Planner {
    /// Bytes assumed for a resource of a kind when the store holds none of that kind to measure
    /// and planning did not fetch it (docs/job-file.md, "Byte estimates"): a style, a TileJSON,
    /// a glyph range a font fills (see `assumedGlyphBytes`), a 2x sprite sheet and its index.
    public static let defaultResourceBytes: [ResourceKind: Int] = [
        .style: 20_000, .source: 2_000, .glyphs: 40_000, .spriteImage: 60_000, .spriteJSON: 8_000, .image: 20_000,
    ]
    /// Bytes assumed for a glyph range outside the scripts fonts mostly fill: most of the 256
    /// ranges of a font stack hold a few glyphs or none (a PBF of a few dozen bytes).
    public static let sparseGlyphRangeBytes = 1_000

    /// The bytes assumed for the glyph range at `url` (`…/0-255.pbf`): a range fonts fill
    /// (U+0000–U+07FF: Latin, Greek, Cyrillic, Armenian, Hebrew, Arabic; U+3000–U+30FF kana;
    /// U+4E00–U+9FFF ideographs; U+AC00–U+D7FF Hangul) at `defaultResourceBytes[.glyphs]`,
    /// any other at `sparseGlyphRangeBytes`. Why per range: a style's 256 ranges at one size
    /// estimated 10 MB for fonts that store under 1 MB.
    static func assumedGlyphBytes(url: String) -> Int {
        let full = defaultResourceBytes[.glyphs] ?? 40_000
        let name = url.split(separator: "/").last.map(String.init) ?? ""
        guard let start = name.split(separator: "-").first.flatMap({ Int($0) }) else { return full }
        let filled = start < 0x0800 || (0x3000..<0x3100).contains(start) || (0x4E00..<0xA000).contains(start)
            || (0xAC00..<0xD800).contains(start)
        return filled ? full : sparseGlyphRangeBytes
    }
    /// Bytes assumed for a resource of a kind not in `defaultResourceBytes`.
    static let otherResourceBytes = 10_000

    /// Adds every resource the rows want to `sharing`, by the rows wanting it: a stored one with
    /// its stored length; one the apply would download (or replace, for a style or TileJSON that
    /// changed upstream) estimated: a document fetched while planning at its length, another at
    /// the mean stored length of its kind, else `defaultResourceBytes`.
    static func addResources(of rows: [RegionPlan], to sharing: inout ContentSharing, input: PlanInput,
                             store: StoredSizes?, drift: [DocumentDrift]) throws {
        var wanting: [String: (kind: ResourceKind, rows: [Int64])] = [:]
        for (index, row) in rows.enumerated() {
            for ref in row.resources.wanted {
                wanting[ref.url, default: (ref.kind, [])].rows.append(Int64(index))
            }
        }
        let urls = wanting.keys.sorted()
        let stored = try store?.storedResourceSizes(among: urls) ?? [:]
        let drifted = Set(drift.map(\.url))
        var means: [ResourceKind: Double] = [:]
        let storedGlyphMean = wanting.values.contains { $0.kind == .glyphs } ? try store?.meanResourceSize(kind: .glyphs) : nil
        for url in urls {
            guard let (kind, members) = wanting[url] else { continue }
            if let size = stored[url], !drifted.contains(url) {
                sharing.add(members, kind: kind, bytes: size)
                continue
            }
            let estimate: Double
            if let document = input.documents[url] {
                estimate = Double(document.data.count)
            } else if kind == .glyphs, storedGlyphMean == nil {
                estimate = Double(assumedGlyphBytes(url: url))
            } else if let mean = means[kind] {
                estimate = mean
            } else {
                let mean = try store?.meanResourceSize(kind: kind) ?? Double(defaultResourceBytes[kind] ?? otherResourceBytes)
                means[kind] = mean
                estimate = mean
            }
            sharing.add(members, kind: kind, bytes: Int64(estimate.rounded()), estimated: true)
        }
    }
}
