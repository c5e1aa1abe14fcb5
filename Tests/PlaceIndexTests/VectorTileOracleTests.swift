import Foundation
@testable import PlaceIndex
import ProvisionLabels
import ProvisionTestSupport
import TileMath
import XCTest

/// The test world's tiles read by an independent decoder (PyPI `mapbox-vector-tile`, in the
/// oracles venv), so that the encoder the tests write with and the index's geometry decoding are
/// both held to the specification, not to each other.
final class VectorTileOracleTests: XCTestCase {
    func testTheTestTilesDecodeAlikeInTheOracleAndTheIndex() throws {
        let python = try XCTUnwrap(Oracles.python, Oracles.missing)
        let directory = try scratch()
        let tiles = TestWorld.encodedTiles()
        for (tile, data) in tiles { try data.write(to: directory.appendingPathComponent("\(tile.z)-\(tile.x)-\(tile.y).mvt")) }
        let script = """
            import json, os, sys, mapbox_vector_tile
            out = {}
            for name in sorted(os.listdir(sys.argv[1])):
                data = open(os.path.join(sys.argv[1], name), "rb").read()
                layers = mapbox_vector_tile.decode(data, default_options={"y_coord_down": True})
                out[name[:-4]] = [[layer, f["properties"].get("name", ""), f["geometry"]["type"], f["geometry"]["coordinates"]]
                                  for layer in sorted(layers) for f in layers[layer]["features"]]
            print(json.dumps(out))
            """
        let process = Process()
        process.executableURL = python
        process.arguments = ["-c", script, directory.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        let oracle = try XCTUnwrap(try JSONSerialization.jsonObject(with: output) as? [String: [[Any]]])
        XCTAssertEqual(oracle.count, tiles.count)
        var compared = (points: 0, polygons: 0, lines: 0)
        for (tile, data) in tiles {
            let theirs = try XCTUnwrap(oracle["\(tile.z)-\(tile.x)-\(tile.y)"])
            var ours: [(String, String, DecodedGeometry?)] = []
            try VectorTileFeatures.forEachFeature(in: data, layers: Set(PlaceSchema.openMapTiles.layers.keys), geometry: true) { layer, f in
                guard case .string(let name)? = f.properties["name"] else { return }
                ours.append((layer, name, TileGeometry.decode(f.geometry, type: f.geometryType, tile: tile, extent: f.extent)))
            }
            XCTAssertEqual(ours.map { "\($0.0) \($0.1)" }, theirs.map { "\($0[0]) \($0[1])" }, "\(tile)")
            for (mine, their) in zip(ours, theirs) {
                let type = their[2] as! String
                func world(_ xy: [Any]) -> WorldPoint {
                    TileGeometry.world(((xy[0] as! NSNumber).doubleValue, (xy[1] as! NSNumber).doubleValue), tile: tile, extent: 4096)
                }
                switch mine.2 {
                case .points(let points)?:
                    XCTAssertEqual(type, "Point")
                    XCTAssertEqual(points, [world(their[3] as! [Any])])
                    compared.points += 1
                case .polygons(let polygons)?:
                    // The oracle tells exterior rings from holes by their winding, as the index does.
                    XCTAssertEqual(type, "Polygon", "\(mine.1) in \(tile): one exterior ring")
                    let rings = their[3] as! [[[Any]]]
                    XCTAssertEqual(polygons.map(\.count), [rings.count], "\(mine.1) in \(tile): holes")
                    XCTAssertEqual(polygons[0].map { $0.count }, rings.map { $0.count - 1 }, "the oracle repeats the first point")
                    XCTAssertEqual(polygons[0].map { $0.first! }, rings.map { world($0[0]) })
                    compared.polygons += 1
                case .lines(let lines)?:
                    XCTAssertTrue(type == "LineString" || type == "MultiLineString")
                    // The index cuts lines to the tile's square: every point it keeps is on the oracle's line.
                    let oracleLines: [[[Any]]] = type == "LineString" ? [their[3] as! [[Any]]] : their[3] as! [[[Any]]]
                    let segments = oracleLines.flatMap { line in zip(line, line.dropFirst()).map { (world($0.0), world($0.1)) } }
                    for point in lines.joined() {
                        let gap = segments.map { distance(point, $0.0, $0.1) }.min()!
                        XCTAssertLessThan(gap, 1e-12, "\(mine.1) in \(tile)")
                    }
                    compared.lines += 1
                case nil:
                    XCTFail("\(mine.1) in \(tile): not decoded")
                }
            }
        }
        print("compared with mapbox-vector-tile: \(compared.points) points, \(compared.lines) lines, \(compared.polygons) polygons")
        XCTAssertGreaterThan(compared.points, 30)
        XCTAssertGreaterThan(compared.polygons, 10)
        XCTAssertGreaterThan(compared.lines, 30)
    }

    func distance(_ p: WorldPoint, _ a: WorldPoint, _ b: WorldPoint) -> Double {
        let dx = b.x - a.x, dy = b.y - a.y
        let t = max(0, min(1, ((p.x - a.x) * dx + (p.y - a.y) * dy) / (dx * dx + dy * dy)))
        return hypot(p.x - (a.x + t * dx), p.y - (a.y + t * dy))
    }
}
