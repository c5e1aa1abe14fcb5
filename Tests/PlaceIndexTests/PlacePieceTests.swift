@testable import PlaceIndex
import XCTest

/// The builder's sort keys order groups as `GroupKey` does, so its entries come out in the order
/// Swift sorts them, and canonically equal names meet in one group.
final class PlacePieceTests: XCTestCase {
    private func key(_ kind: PlaceKind, _ names: [String], layer: String = "poi", featureClass: String = "",
                     subclass: String = "") -> PlaceIndexBuilder.GroupKey {
        .init(kind: kind, layer: layer, featureClass: featureClass, subclass: subclass, names: names)
    }

    func testKeyBytesSortAsGroupKeysAndReadBack() {
        let keys = [
            key(.place, ["a"]), key(.place, ["a", "b"]), key(.place, ["ab"]), key(.place, ["a\u{0}c"]),
            key(.place, ["Zürich"]), key(.place, ["Zurich"]), key(.place, ["Zz"]), key(.place, ["日本"]),
            key(.place, ["a"], layer: "place"), key(.place, ["a"], layer: "place", featureClass: "city"),
            key(.place, ["a"], layer: "place", featureClass: "city\u{0}x"), key(.place, ["a"], layer: "pl"),
            key(.poi, ["a"]), key(.street, ["A"]), key(.transit, ["Ω"]), key(.place, ["\u{1F600}"]),
            key(.place, ["\u{FFFD}"]), key(.park, ["é"], featureClass: "e\u{301}"),
        ]
        let bySwift = keys.sorted()
        let byBytes = keys.sorted { PlacePiece.bytes(of: $0).lexicographicallyPrecedes(PlacePiece.bytes(of: $1)) }
        XCTAssertEqual(byBytes, bySwift)
        for key in keys {
            let bytes = PlacePiece.bytes(of: key)
            XCTAssertEqual(bytes.withUnsafeBytes { PlacePiece.group($0) }, key)
        }
    }

    func testCanonicallyEqualNamesHaveOneKey() {
        let composed = key(.place, ["Hämeentie", "Café"]), decomposed = key(.place, ["Ha\u{308}meentie", "Cafe\u{301}"])
        XCTAssertEqual(composed, decomposed, "Swift calls them equal")
        XCTAssertEqual(PlacePiece.bytes(of: composed), PlacePiece.bytes(of: decomposed))
    }

    func testValuesReadBackAsWritten() {
        let points = [WorldPoint(x: 0.25, y: -1e-9), WorldPoint(x: 1.0000001, y: 0.5)]
        for geometry in [DecodedGeometry.points(points), .lines([points, points.reversed()]), .polygons([[points, points], [points]])] {
            let piece = PlacePiece(group: key(.poi, ["x"]), rank: -1_000_000, featureClass: "cafe", subclass: "büro",
                                   zoom: 14, extent: 4096, geometry: geometry)
            let back = piece.value.withUnsafeBytes { PlacePiece(group: piece.group, value: $0) }
            XCTAssertEqual(back.rank, piece.rank)
            XCTAssertEqual(back.featureClass, "cafe")
            XCTAssertEqual(back.subclass, "büro")
            XCTAssertEqual(back.zoom, 14)
            XCTAssertEqual(back.extent, 4096)
            XCTAssertEqual("\(back.geometry)", "\(geometry)")
        }
    }
}
