import Foundation
import ProvisionFoundation
import XCTest
@testable import ProvisionModel

/// `baseJob` with a search pack fed by both regions: one source a style pack, one a region's tileset.
private let searchJob: JSONValue = baseJob
    .setting("/searchPacks", to: [["id": "places", "sources": ["streets", "https://tiles.example.com/data/{z}/{x}/{y}.pbf"]]])
    .setting("/regions/0/searchPacks", to: ["places"])
    .setting("/regions/1/searchPacks", to: ["places"])

/// Invalid variations of `searchJob`: (name, edits, the one diagnostic expected as pointer and
/// message; a message starting with "~" only has to be contained).
private let searchCases: [InvalidJobCase] = [
    ("unknown pack in a region", [("/regions/1/searchPacks/0", "place")],
     ("/regions/1/searchPacks/0", "unknown search pack \"place\"; did you mean \"places\"?")),
    ("pack in a region of a job without packs", [("/searchPacks", nil), ("/regions/0/searchPacks", nil)],
     ("/regions/1/searchPacks/0", "unknown search pack \"places\"; the job declares no search packs")),
    ("pack named twice by a region", [("/regions/0/searchPacks", ["places", "places"])],
     ("/regions/0/searchPacks/1", "expected each entry once, found \"places\" again")),
    ("region's packs not an array", [("/regions/0/searchPacks", "places")],
     ("/regions/0/searchPacks", "expected an array of search pack ids, found the string \"places\"")),
    ("duplicate pack id", [("/searchPacks/-", ["id": "places", "sources": ["streets"]])],
     ("/searchPacks/1/id", "duplicate search pack id \"places\"; it is first used at /searchPacks/0/id")),
    ("pack id unsafe", [("/searchPacks/0/id", "my places"), ("/regions/0/searchPacks", nil), ("/regions/1/searchPacks", nil)],
     ("/searchPacks/0/id", "~expected an id of 1 to 64 letters")),
    ("unknown source", [("/searchPacks/0/sources/0", "street")],
     ("/searchPacks/0/sources/0", "unknown source \"street\"; did you mean \"streets\"?")),
    ("source of an unknown style pack", [("/searchPacks/0/sources/0", "roads/openmaptiles")],
     ("/searchPacks/0/sources/0", "~unknown source \"roads/openmaptiles\"; expected a style pack id, <stylePack>/<source>")),
    ("source a tileset no region draws", [("/searchPacks/0/sources/1", "https://other.example/{z}/{x}/{y}.pbf")],
     ("/searchPacks/0/sources/1", "~unknown source \"https://other.example/{z}/{x}/{y}.pbf\"")),
    ("sources empty", [("/searchPacks/0/sources", [])],
     ("/searchPacks/0/sources", "expected at least one entry, found an empty array")),
    ("sources missing", [("/searchPacks/0/sources", nil)], ("/searchPacks/0", "missing required key \"sources\"")),
    ("sources not an array", [("/searchPacks/0/sources", "streets")],
     ("/searchPacks/0/sources", "~expected a non-empty array of sources")),
    ("names with a number", [("/searchPacks/0/names", ["name", 5])], ("/searchPacks/0/names/1", "expected a string, found 5")),
    ("names repeated", [("/searchPacks/0/names", ["name", "name"])],
     ("/searchPacks/0/names/1", "expected each entry once, found \"name\" again")),
    ("unknown pack key", [("/searchPacks/0/name", ["name"])],
     ("/searchPacks/0/name", "unknown key \"name\"; did you mean \"names\"?")),
    ("packs not an array", [("/searchPacks", ["id": "places"]), ("/regions/0/searchPacks", nil), ("/regions/1/searchPacks", nil)],
     ("/searchPacks", "expected an array of search packs, found an object")),
    ("unknown kind", [("/searchPacks/0/layers", ["labels": ["kind": "places"]])],
     ("/searchPacks/0/layers/labels/kind", "~unknown kind \"places\"; did you mean \"place\"?")),
    ("kind missing", [("/searchPacks/0/layers", ["labels": ["class": "type"]])],
     ("/searchPacks/0/layers/labels", "missing required key \"kind\"")),
    ("unknown layer key", [("/searchPacks/0/layers", ["labels": ["kind": "poi", "ranks": "r"]])],
     ("/searchPacks/0/layers/labels/ranks", "unknown key \"ranks\"; did you mean \"rank\"?")),
    ("rank a number", [("/searchPacks/0/layers", ["labels": ["kind": "poi", "rank": 3]])],
     ("/searchPacks/0/layers/labels/rank", "expected a property name or an array of them, found 3")),
    ("layers empty", [("/searchPacks/0/layers", JSONValue.object(JSONObject()))],
     ("/searchPacks/0/layers", "expected at least one layer, found an empty object")),
    ("class empty", [("/searchPacks/0/layers", ["labels": ["kind": "poi", "class": ""]])],
     ("/searchPacks/0/layers/labels/class", "expected a property name, found an empty string")),
]

final class SearchPackValidationTests: XCTestCase {
    func testASearchPackIsReadWithItsDefaults() throws {
        let base = try makeTemporaryDirectory(self)
        let result = validate(searchJob, base: base)
        XCTAssertEqual(result.diagnostics, [])
        let job = try XCTUnwrap(result.job)
        XCTAssertEqual(job.searchPacks, [SearchPack(id: "places", sources: ["streets", "https://tiles.example.com/data/{z}/{x}/{y}.pbf"],
                                                    names: ["name", "name:en", "name_en", "name_int", "name:latin"])])
        XCTAssertEqual(job.searchPacks[0].file, "search/places.db")
        XCTAssertEqual(job.regions.map(\.searchPacks), [["places"], ["places"]])
    }

    func testNamesLayersAndAStyleSourceAreRead() throws {
        let base = try makeTemporaryDirectory(self)
        let document = searchJob
            .setting("/searchPacks/0/sources", to: ["streets/openmaptiles"])
            .setting("/searchPacks/0/names", to: ["name:fi", "name"])
            .setting("/searchPacks/0/layers", to: ["labels": ["kind": "poi", "class": "type", "subclass": "sub", "rank": ["a", "b"]],
                                                   "roads": ["kind": "street", "rank": "r"]])
        let result = validate(document, base: base)
        XCTAssertEqual(result.diagnostics, [])
        let pack = try XCTUnwrap(result.job?.searchPacks.first)
        XCTAssertEqual(pack.sources, ["streets/openmaptiles"])
        XCTAssertEqual(pack.names, ["name:fi", "name"])
        XCTAssertEqual(pack.layers, ["labels": SearchLayerMapping(kind: "poi", classKey: "type", subclassKey: "sub", rankKeys: ["a", "b"]),
                                     "roads": SearchLayerMapping(kind: "street", rankKeys: ["r"])])
    }

    func testEachInvalidSearchPackCaseReportsExactlyItsDiagnostic() throws {
        let base = try makeTemporaryDirectory(self)
        assertEachCaseReportsExactlyItsDiagnostic(searchCases, editing: searchJob, base: base)
    }
}
