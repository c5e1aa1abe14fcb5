import ProvisionModel
import XCTest
@testable import ProvisionExecution

final class VerifierTests: XCTestCase {
    let verifier = Verifier()

    func testVectorTilesFromBothEncodersAndEmptyTilesAreAccepted() {
        accepts(Fixtures.pythonTile, .tile)
        accepts(Fixtures.tile(layers: ["a", "b"]), .tile)
        accepts(Data(), .tile)
    }

    func testGzipTileIsInflatedToThePayload() {
        XCTAssertEqual(try verifier.verify(Fixtures.pythonTileGzip, kind: .tile).get(), Fixtures.pythonTile)
    }

    func testRasterTilesAreAcceptedAsIs() {
        for image in [Fixtures.png(), Fixtures.jpeg, Fixtures.webp] {
            XCTAssertEqual(try verifier.verify(image, kind: .tile).get(), image)
        }
    }

    func testBadTilesAreRefused() {
        refuses(Fixtures.html, .tile, containing: "HTML")
        refuses(Data(#"{"message":"Not Authorized"}"#.utf8), .tile, containing: "vector tile")
        // A layer without a version.
        var layer = PB()
        layer.string(1, "water")
        var tile = PB()
        tile.message(3, layer)
        refuses(tile.bytes, .tile, containing: "version")
        // A layer whose length overruns the buffer: a truncated tile.
        refuses(Fixtures.pythonTile.prefix(40), .tile, containing: "overruns")
        // A gzip stream cut short.
        refuses(Fixtures.pythonTileGzip.prefix(30), .tile, containing: "gzip")
        // A top-level field other than layers.
        var other = PB()
        other.varint(1, 7)
        refuses(other.bytes, .tile, containing: "field 1")
    }

    func testGzipInflationIsBounded() {
        let small = Verifier(maxInflatedBytes: 50)
        guard case .failure(.invalidBody(let why)) = small.verify(Fixtures.pythonTileGzip, kind: .tile) else {
            return XCTFail("a 97-byte tile must exceed a 50-byte bound")
        }
        XCTAssertTrue(why.contains("beyond 50"))
    }

    func testStyleNeedsVersionAndSources() {
        accepts(Fixtures.style, .style)
        refuses(Data(#"{"version":8,"layers":[]}"#.utf8), .style, containing: "sources", document: true)
        refuses(Data(#"{"sources":{}}"#.utf8), .style, containing: "version", document: true)
        refuses(Data("[1,2]".utf8), .style, containing: "object", document: true)
        refuses(Fixtures.html, .style, containing: "HTML")
        refuses(Data(#"{"version":8,"#.utf8), .style, containing: "not JSON", document: true)
    }

    func testSourceIsTileJSONWithTilesOrGeoJSON() {
        accepts(Fixtures.tileJSON, .source)
        accepts(Data(#"{"type":"FeatureCollection","features":[]}"#.utf8), .source)
        refuses(Data(#"{"tilejson":"3.0.0"}"#.utf8), .source, containing: "tiles", document: true)
        refuses(Data(#"{"tiles":[]}"#.utf8), .source, containing: "tiles", document: true)
    }

    func testSpriteJSONIsAnObject() {
        accepts(Data(#"{"marker":{"x":0,"y":0,"width":16,"height":16,"pixelRatio":1}}"#.utf8), .spriteJSON)
        accepts(Data("{}".utf8), .spriteJSON)
        refuses(Data("\"marker\"".utf8), .spriteJSON, containing: "expected an object", document: true)
        refuses(Fixtures.html, .spriteJSON, containing: "HTML")
    }

    func testImagesNeedASignature() {
        for image in [Fixtures.png(), Fixtures.jpeg, Fixtures.webp] {
            accepts(image, .spriteImage)
            accepts(image, .image)
        }
        refuses(Data("GIF89a".utf8), .spriteImage)
        refuses(Data(Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WAVE".utf8)), .image)
        refuses(Fixtures.html, .spriteImage, containing: "HTML")
        refuses(Data(), .image)
    }

    func testGlyphsArePlausiblePBF() {
        accepts(Fixtures.glyphs(), .glyphs)
        accepts(Data(), .glyphs)
        refuses(Fixtures.glyphs().dropLast(3), .glyphs, containing: "glyph")
        refuses(Fixtures.tile(layers: ["a"]), .glyphs, containing: "field 3")
        refuses(Fixtures.html, .glyphs, containing: "HTML")
    }
}
