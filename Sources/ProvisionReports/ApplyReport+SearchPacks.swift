import Foundation
import ProvisionFoundation
import ProvisionModel

/// The search packs of an apply's report: each file as the lock records it and, for those this
/// apply built, the bad input the build skipped or cleaned, counted.
extension ApplyReport {
    /// `searchPacks` of the JSON report, in the lock's order; `input` is null for a pack kept as it was.
    var searchPacksJSON: JSONValue {
        .array(lock.searchPacks.map { record in
            let found = outcome.searchPacks.first { $0.id == record.id }
            return [
                "id": .string(record.id), "file": .string(record.file), "built": .bool(found != nil),
                "entries": .int(record.entries), "tiles": .int(record.tiles), "bytes": .int(Int(record.bytes)),
                "digest": .string(record.digest),
                "input": found.map { f in
                    ["tilesRead": .int(f.tiles), "malformedTiles": .int(f.malformedTiles), "features": .int(f.features),
                     "namedFeatures": .int(f.namedFeatures), "brokenGeometry": .int(f.brokenGeometry),
                     "namesWithControlCharacters": .int(f.namesWithControlCharacters), "namesTooLong": .int(f.namesTooLong),
                     "missingLayers": .array(f.missingLayers.map { missing in
                         ["source": .string(missing.source), "layers": .array(missing.layers.map { .string($0) })]
                     })]
                } ?? .null,
            ]
        })
    }

    /// One line per built pack whose input had something bad in it: what was skipped, cleaned or
    /// missing (the progress line already said what was built); empty when nothing was.
    var searchPacksText: String {
        outcome.searchPacks.filter(\.hasFindings).map { f in
            var parts: [String] = []
            if f.brokenGeometry > 0 { parts.append("skipped \(plural(f.brokenGeometry, "feature")) with broken geometry") }
            if f.namesTooLong > 0 { parts.append("skipped \(plural(f.namesTooLong, "name")) longer than the index takes") }
            if f.namesWithControlCharacters > 0 {
                parts.append("cleaned \(plural(f.namesWithControlCharacters, "name")) of control characters")
            }
            if f.malformedTiles > 0 { parts.append("skipped \(plural(f.malformedTiles, "tile")) that \(f.malformedTiles == 1 ? "is" : "are") not a vector tile") }
            for missing in f.missingLayers {
                parts.append("no tile of \(missing.source) holds \(missing.layers.count == 1 ? "layer" : "layers") \(listed(missing.layers))")
            }
            return "Search pack \(f.id): \(parts.joined(separator: "; ")).\n"
        }.joined()
    }
}
