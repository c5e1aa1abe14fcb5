import Foundation
import ProvisionFoundation
import XCTest
@testable import ProvisionModel

/// `pmtiles:PATH` and `pmtiles:http(s)://…` mirrors in a job's `origins`.
final class PMTilesMirrorValidationTests: XCTestCase {
    private func origins(_ mirrors: [(String, String)]) -> JSONValue {
        baseJob.setting("/origins", to: .object(JSONObject(mirrors.map { ($0.0, .string($0.1)) })))
    }

    func testALocalArchiveResolvesAgainstTheJobFileAndARemoteOneIsKeptAsWritten() throws {
        let base = try makeTemporaryDirectory(self)
        let file = try write("PMTiles", to: "data/planet.pmtiles", in: base)
        let result = validate(origins([
            ("https://a.example.com/tiles/", "pmtiles:data/planet.pmtiles"),
            ("https://b.example.com/tiles/", "pmtiles:https://archives.example.org/planet.pmtiles?v=3"),
            ("https://c.example.com/", "pmtiles:http://127.0.0.1:8080/c.pmtiles"),
            ("https://d.example.com/", "pmtiles:\(file.path)"),
        ]), base: base)
        XCTAssertEqual(result.diagnostics, [])
        let mirrors = Dictionary(uniqueKeysWithValues: try XCTUnwrap(result.job).origins.map { ($0.prefix, $0.mirror) })
        XCTAssertEqual(mirrors["https://a.example.com/tiles/"], .pmtiles(file))
        XCTAssertEqual(mirrors["https://b.example.com/tiles/"], .remotePMTiles("https://archives.example.org/planet.pmtiles?v=3"))
        XCTAssertEqual(mirrors["https://c.example.com/"], .remotePMTiles("http://127.0.0.1:8080/c.pmtiles"))
        XCTAssertEqual(mirrors["https://d.example.com/"], .pmtiles(file))
    }

    func testBadArchiveMirrorsAreEachReportedAtTheirPointer() throws {
        let base = try makeTemporaryDirectory(self)
        try FileManager.default.createDirectory(at: base.appendingPathComponent("dir.pmtiles"), withIntermediateDirectories: true)
        let diagnostics = validate(origins([
            ("https://a.example.com/", "pmtiles:"),
            ("https://b.example.com/", "pmtiles:missing/planet.pmtiles"),
            ("https://c.example.com/", "pmtiles:dir.pmtiles"),
            ("https://d.example.com/", "pmtiles:https://"),
            ("https://e.example.com/", "pmtiles:https://x.example.com/p.pmtiles?key=${KEY}"),
            ("https://f.example.com/", "pmtiles:http://x.example.com/a b.pmtiles"),
            ("https://g.example.com/", "pmtiles:https:///p.pmtiles"),
        ]), base: base).diagnostics
        XCTAssertEqual(diagnostics.map(\.pointer), [
            "/origins/https:~1~1a.example.com~1", "/origins/https:~1~1b.example.com~1", "/origins/https:~1~1c.example.com~1",
            "/origins/https:~1~1d.example.com~1", "/origins/https:~1~1e.example.com~1", "/origins/https:~1~1f.example.com~1",
            "/origins/https:~1~1g.example.com~1",
        ])
        XCTAssertEqual(diagnostics.map(\.message), [
            "expected pmtiles:PATH with a file path, pmtiles:http://… or pmtiles:https://…, found \"pmtiles:\"",
            "PMTiles file not found: \(base.path)/missing/planet.pmtiles",
            "expected a PMTiles file, found a directory: \(base.path)/dir.pmtiles",
            "expected pmtiles:https://HOST/PATH with a host, found \"pmtiles:https://\"",
            "expected a PMTiles archive URL without ${NAME} references (it is requested as written), "
                + "found \"pmtiles:https://x.example.com/p.pmtiles?key=${KEY}\"",
            "expected a URL without spaces or control characters, found \"http://x.example.com/a b.pmtiles\"",
            "expected pmtiles:https://HOST/PATH with a host, found \"pmtiles:https:///p.pmtiles\"",
        ])
    }

    func testAnMBTilesMirrorStillSaysMBTiles() throws {
        let base = try makeTemporaryDirectory(self)
        XCTAssertEqual(validate(origins([("https://a.example.com/", "mbtiles:")]), base: base).diagnostics.map(\.message),
                       ["expected mbtiles:PATH with a file path, found \"mbtiles:\""])
    }
}
