import Foundation
import ProvisionFoundation
import XCTest
@testable import ProvisionModel

/// `baseJob` with a routing pack both regions name.
private let routingJob: JSONValue = baseJob
    .setting("/routingPacks", to: [["id": "drive", "tiles": "https://graph.example.com/v1/{tilePath}"]])
    .setting("/regions/0/routingPacks", to: ["drive"])
    .setting("/regions/1/routingPacks", to: ["drive"])

/// Invalid variations of `routingJob`: (name, edits, the one diagnostic expected as pointer and
/// message; a message starting with "~" only has to be contained).
private let routingCases: [InvalidJobCase] = [
    ("template without {tilePath}", [("/routingPacks/0/tiles", "https://graph.example.com/v1/{z}/{x}/{y}.gph")],
     ("/routingPacks/0/tiles", "~expected {tilePath} exactly once (Valhalla's mjolnir.tile_url form")),
    ("template with {tilePath} twice", [("/routingPacks/0/tiles", "https://graph.example.com/{tilePath}/{tilePath}")],
     ("/routingPacks/0/tiles", "~found it 2 times in")),
    ("template not http", [("/routingPacks/0/tiles", "file:///graph/{tilePath}")],
     ("/routingPacks/0/tiles", "~expected a graph tile URL template (http:// or https://, with {tilePath})")),
    ("template with a space", [("/routingPacks/0/tiles", "https://graph.example.com/my tiles/{tilePath}")],
     ("/routingPacks/0/tiles", "~expected a URL without spaces")),
    ("neither tiles nor extract", [("/routingPacks/0/tiles", nil)],
     ("/routingPacks/0", "expected exactly one of \"tiles\" (a {tilePath} URL template) or \"extract\" (a tile extract file), found none")),
    ("both tiles and extract", [("/routingPacks/0/extract", "graph.tar")], ("/routingPacks/0", "~found both")),
    ("extract URL with a ${NAME}", [("/routingPacks/0/tiles", nil),
                                    ("/routingPacks/0/extract", "https://graph.example.com/drive.tar?key=${GRAPH_KEY}")],
     ("/routingPacks/0/extract", "~expected a tile extract URL without ${NAME} references")),
    ("extract URL with a space", [("/routingPacks/0/tiles", nil), ("/routingPacks/0/extract", "https://graph.example.com/my drive.tar")],
     ("/routingPacks/0/extract", "~expected a URL without spaces")),
    ("extract missing", [("/routingPacks/0/tiles", nil), ("/routingPacks/0/extract", "nowhere/graph.tar")],
     ("/routingPacks/0/extract", "~tile extract not found: ")),
    ("unknown level", [("/routingPacks/0/levels", [0, 4])],
     ("/routingPacks/0/levels/1", "~unknown graph level 4; expected one of 0, 1, 2, 3")),
    ("level not a number", [("/routingPacks/0/levels", ["2"])],
     ("/routingPacks/0/levels/0", "~unknown graph level the string \"2\"")),
    ("level twice", [("/routingPacks/0/levels", [2, 2])], ("/routingPacks/0/levels/1", "expected each level once, found 2 again")),
    ("levels empty", [("/routingPacks/0/levels", [])], ("/routingPacks/0/levels", "expected at least one level, found an empty array")),
    ("gzip not a flag", [("/routingPacks/0/gzip", "yes")], ("/routingPacks/0/gzip", "expected true or false, found the string \"yes\"")),
    ("attribution empty", [("/routingPacks/0/attribution", "")],
     ("/routingPacks/0/attribution", "expected a non-empty string, found an empty string")),
    ("licence a number", [("/routingPacks/0/licence", 1)], ("/routingPacks/0/licence", "expected a string, found 1")),
    ("unknown pack key", [("/routingPacks/0/level", [2])],
     ("/routingPacks/0/level", "unknown key \"level\"; did you mean \"levels\"?")),
    ("duplicate pack id", [("/routingPacks/-", ["id": "drive", "tiles": "https://other.example.com/{tilePath}"])],
     ("/routingPacks/1/id", "duplicate routing pack id \"drive\"; it is first used at /routingPacks/0/id")),
    ("pack id unsafe", [("/routingPacks/0/id", "my drive"), ("/regions/0/routingPacks", nil), ("/regions/1/routingPacks", nil)],
     ("/routingPacks/0/id", "~expected an id of 1 to 64 letters")),
    ("unknown pack in a region", [("/regions/1/routingPacks/0", "driv")],
     ("/regions/1/routingPacks/0", "unknown routing pack \"driv\"; did you mean \"drive\"?")),
    ("pack in a region of a job without packs", [("/routingPacks", nil), ("/regions/0/routingPacks", nil)],
     ("/regions/1/routingPacks/0", "unknown routing pack \"drive\"; the job declares no routing packs")),
    ("pack named twice by a region", [("/regions/0/routingPacks", ["drive", "drive"])],
     ("/regions/0/routingPacks/1", "expected each entry once, found \"drive\" again")),
    ("region's packs not an array", [("/regions/0/routingPacks", "drive")],
     ("/regions/0/routingPacks", "expected an array of routing pack ids, found the string \"drive\"")),
    ("packs not an array", [("/routingPacks", ["id": "drive"]), ("/regions/0/routingPacks", nil), ("/regions/1/routingPacks", nil)],
     ("/routingPacks", "expected an array of routing packs, found an object")),
]

final class RoutingPackValidationTests: XCTestCase {
    func testARoutingPackIsReadWithItsDefaults() throws {
        let base = try makeTemporaryDirectory(self)
        let result = validate(routingJob, base: base)
        XCTAssertEqual(result.diagnostics, [])
        let job = try XCTUnwrap(result.job)
        XCTAssertEqual(job.routingPacks, [RoutingPack(id: "drive", tiles: "https://graph.example.com/v1/{tilePath}")])
        XCTAssertEqual(job.routingPacks[0].levels, [0, 1, 2])
        XCTAssertEqual(job.routingPacks[0].file, "routing/drive.tar")
        XCTAssertEqual(job.routingPacks[0].url(path: "2/000/864/819.gph"), "https://graph.example.com/v1/2/000/864/819.gph")
        XCTAssertEqual(job.regions.map(\.routingPacks), [["drive"], ["drive"]])
    }

    func testGzipLevelsAndCreditsAreRead() throws {
        let base = try makeTemporaryDirectory(self)
        let document = routingJob
            .setting("/routingPacks/0/gzip", to: true)
            .setting("/routingPacks/0/levels", to: [2, 0])
            .setting("/routingPacks/0/attribution", to: "© OpenStreetMap contributors")
            .setting("/routingPacks/0/licence", to: "ODbL-1.0")
        let result = validate(document, base: base)
        XCTAssertEqual(result.diagnostics, [])
        let pack = try XCTUnwrap(result.job?.routingPacks.first)
        XCTAssertEqual(pack, RoutingPack(id: "drive", tiles: "https://graph.example.com/v1/{tilePath}", gzip: true, levels: [0, 2],
                                         attribution: "© OpenStreetMap contributors", licence: "ODbL-1.0"))
        XCTAssertEqual(pack.url(path: "0/003/196.gph"), "https://graph.example.com/v1/0/003/196.gph.gz")
    }

    func testAnExtractIsResolvedAgainstTheJobFilesDirectory() throws {
        let base = try makeTemporaryDirectory(self)
        try Data("not checked here".utf8).write(to: base.appendingPathComponent("town.tar"))
        let result = validate(routingJob.setting("/routingPacks/0/tiles", to: nil).setting("/routingPacks/0/extract", to: "town.tar"),
                              base: base)
        XCTAssertEqual(result.diagnostics, [])
        let pack = try XCTUnwrap(result.job?.routingPacks.first)
        XCTAssertEqual(pack.extract?.path, base.appendingPathComponent("town.tar").standardizedFileURL.path)
        XCTAssertEqual(pack.source, "extract:" + (pack.extract?.path ?? ""))
        XCTAssertEqual(pack.url(path: "2/000/807/140.gph"), "2/000/807/140.gph")
        XCTAssertNil(pack.remoteExtract)
    }

    /// An extract over HTTP(S) is kept as its URL (read with range requests by the apply), not as a path.
    func testAnExtractURLIsKeptAsAURL() throws {
        let url = "https://graph.example.com/v3.9/town.tar"
        let result = validate(routingJob.setting("/routingPacks/0/tiles", to: nil).setting("/routingPacks/0/extract", to: .string(url)),
                              base: try makeTemporaryDirectory(self))
        XCTAssertEqual(result.diagnostics, [])
        let pack = try XCTUnwrap(result.job?.routingPacks.first)
        XCTAssertEqual(pack.remoteExtract, url)
        XCTAssertEqual(pack.source, "extract:" + url)
    }

    func testEachInvalidRoutingPackCaseReportsExactlyItsDiagnostic() throws {
        let base = try makeTemporaryDirectory(self)
        assertEachCaseReportsExactlyItsDiagnostic(routingCases, editing: routingJob, base: base)
    }
}
