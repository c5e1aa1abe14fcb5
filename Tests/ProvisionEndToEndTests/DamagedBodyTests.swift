import Foundation
import ProvisionModel
import XCTest

/// Issue 9 #8: bodies are verified deep enough that a row MapLibre cannot use is never stored,
/// and a document that arrived whole but cannot be used is the document's problem (65).
final class DamagedBodyTests: WorkspaceTestCase {
    override class var servesTiles: Bool { true }

    /// A length-delimited protobuf field (every length here is under 128).
    private func field(_ number: UInt8, _ payload: [UInt8]) -> [UInt8] { [number << 3 | 2, UInt8(payload.count)] + payload }

    /// A one-layer vector tile whose only feature tags key 5 of a layer that has one key: the
    /// framing is sound (a walk of layers and names passes it), MapLibre's feature lookup is not.
    private var tileWithATagPastItsKeys: Data {
        let feature = field(2, [5, 0]) + [0x18, 0x01] + field(4, [9, 2, 2])
        let layer = [0x78, 0x02] + field(1, Array("water".utf8)) + field(2, feature) + field(3, Array("class".utf8))
            + field(4, field(1, Array("lake".utf8))) + [0x28, 0x80, 0x20]
        return Data(field(3, layer))
    }

    func testADamagedSpritePNGAndADamagedVectorTileAreNotStored() throws {
        let job = try ws.write(ws.job([Demo.london], tiles: .http)).path
        let broken = try XCTUnwrap(Demo.london.tiles.filter { $0.z == 14 }.sorted().first)
        ws.server.setRoute(ws.tilePath(broken), .ok(tileWithATagPastItsKeys))
        // The demo sprite with one byte of its image data flipped: signature and chunk framing intact.
        var sprite = try [UInt8](Data(contentsOf: Demo.directory.appendingPathComponent("sprites/streets@2x.png")))
        let idat = try XCTUnwrap(sprite.indices.first { Array(sprite[$0..<$0 + 4]) == Array("IDAT".utf8) })
        sprite[idat + 20] ^= 0x10
        ws.server.setRoute("/demo/sprites/streets@2x.png", .ok(Data(sprite), contentType: "image/png"))

        let reportURL = ws.root.appendingPathComponent("report.json")
        let result = try ws.provision("apply", "--quiet", "--report", reportURL.path, job)
        result.expect(75, "partial apply")
        let report = try readJSON(reportURL)
        let reasons = Dictionary(uniqueKeysWithValues: (report["failures"]?.arrayValue ?? []).compactMap { failure in
            failure["url"]?.stringValue.map { ($0, failure["reason"]?.stringValue ?? "") }
        })
        let tileURL = Demo.canonicalTiles + "\(broken.z)/\(broken.x)/\(broken.y).pbf"
        let spriteURL = Demo.canonicalBase + "sprites/streets@2x.png"
        XCTAssertEqual(Set(reasons.keys), [tileURL, spriteURL], result.stdout)
        XCTAssertTrue(reasons[tileURL]?.contains("tag key index 5 past the layer's 1 keys") == true, "\(reasons)")
        XCTAssertTrue(reasons[spriteURL]?.contains("PNG chunk IDAT at byte \(idat - 4): CRC mismatch") == true, "\(reasons)")
        XCTAssertEqual(report["regions"]?.arrayValue?.first?["complete"], .bool(false))
        XCTAssertEqual(try ws.sqlite.int("SELECT count(*) FROM resources WHERE url = '\(spriteURL)'"), 0, "no damaged sprite stored")
        XCTAssertEqual(try ws.sqlite.int("SELECT count(*) FROM tiles WHERE z = \(broken.z) AND x = \(broken.x) AND y = \(broken.y)"), 0,
                       "no damaged tile stored")
        XCTAssertEqual(try ws.sqlite.int("SELECT count(*) FROM tiles"), Demo.london.tiles.count - 1)
    }

    func testAStyleNestedPastTheCapIsAnUnusableDocument() throws {
        let job = try ws.write(ws.job([Demo.paris], tiles: .http)).path
        let deep = String(repeating: "[", count: 200) + String(repeating: "]", count: 200)
        let style = #"{"version":8,"sources":{},"layers":[],"metadata":{"nest":\#(deep)}}"#
        ws.server.setRoute("/demo/styles/streets.json", .ok(Data(style.utf8), contentType: "application/json"))
        for command in ["plan", "apply"] {
            let result = try ws.provision(command, job)
            result.expect(65, "\(command): a style past the depth cap is the document's problem, not the origin's")
            XCTAssertTrue(result.stderr.contains(Demo.styleURL), result.stderr)
            XCTAssertTrue(result.stderr.contains("depth cap of 128 levels"), result.stderr)
            XCTAssertTrue(result.stderr.contains("(at /metadata/nest/0/0/"), result.stderr)
        }
        XCTAssertEqual(ws.tileRequestPaths, [], "nothing is downloaded")
    }
}
