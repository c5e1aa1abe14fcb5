import Foundation
import ProvisionFoundation
import ProvisionStore
import TileMath

/// What `provision search` found: the document `--json` prints (`Jobs/schema/search.schema.json`)
/// and its text view, a table.
public struct SearchReport: Equatable, Sendable {
    /// Bumped on every change to the JSON shape.
    public static let schemaVersion = 1

    /// One place found, with the pack it comes from.
    public struct Result: Equatable, Sendable {
        /// The pack's name (`search/<pack>.db`).
        public var pack: String
        public var place: PlaceSearchResult
        /// Metres from `--near`, when given.
        public var distance: Double?
    }

    /// The store directory searched.
    public var store: String
    /// The query as typed.
    public var query: String
    /// The words the index matched (each a prefix).
    public var words: [String]
    public var near: LngLat?
    public var region: String?
    public var limit: Int
    /// The packs searched, in name order.
    public var packs: [String]
    /// The answers, best first.
    public var results: [Result]

    /// The `--json` document.
    public var json: JSONValue {
        .object(JSONObject([
            ("schemaVersion", .int(Self.schemaVersion)), ("kind", "search"), ("store", .string(store)),
            ("query", .string(query)), ("words", .array(words.map { .string($0) })),
            ("near", near.map { .object(JSONObject([("lon", .double($0.lng)), ("lat", .double($0.lat))])) } ?? .null),
            ("region", region.map { .string($0) } ?? .null), ("limit", .int(limit)),
            ("packs", .array(packs.map { .string($0) })), ("results", .array(results.map(\.json))),
        ]))
    }

    /// The human view: a line saying what was searched, then one row a place.
    public var text: String {
        let scope = "\(plural(packs.count, "search pack")) of \(store)"
            + (region.map { " (region \($0))" } ?? "")
        guard !results.isEmpty else { return "No place matches \"\(query)\" in \(scope).\n" }
        let header = ["name", "kind/class", "lon, lat", "distance", "regions", "pack"]
        let rows = results.map { result -> [String] in
            let place = result.place
            return [place.name, "\(place.kind)/\(place.featureClass)",
                    String(format: "%.5f, %.5f", place.position.lng, place.position.lat),
                    result.distance.map(Self.distanceText) ?? "-",
                    place.regions.isEmpty ? "-" : place.regions.joined(separator: ", "), result.pack]
        }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        let lines = ([header] + rows).map { row in
            row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
        return "\(plural(results.count, "place")) for \"\(query)\" in \(scope):\n\n" + lines.joined(separator: "\n") + "\n"
    }

    /// `850 m`, `1.2 km`, `35 km`.
    static func distanceText(_ metres: Double) -> String {
        if metres < 1_000 { return "\(Int(metres.rounded())) m" }
        if metres < 10_000 { return String(format: "%.1f km", metres / 1_000) }
        return "\(grouped(Int((metres / 1_000).rounded()))) km"
    }
}

extension SearchReport.Result {
    /// One entry of `results`.
    var json: JSONValue {
        .object(JSONObject([
            ("pack", .string(pack)), ("id", .int(Int(place.id))), ("name", .string(place.name)), ("kind", .string(place.kind)),
            ("class", .string(place.featureClass)), ("lon", .double(place.position.lng)), ("lat", .double(place.position.lat)),
            ("rank", .int(place.rank)), ("minzoom", .int(place.minZoom)), ("exact", .bool(place.exact)),
            ("regions", .array(place.regions.map { .string($0) })),
            ("distanceMeters", distance.map { .double(($0 * 10).rounded() / 10) } ?? .null),
        ]))
    }
}
