import Foundation
import ProvisionFoundation
import ProvisionTestSupport
import XCTest

/// `Jobs/cities-search.json`: the demo job with a search pack of its named places, applied from
/// the bundled data and asked as the README shows.
final class DemoSearchTests: WorkspaceTestCase {
    func provision(_ arguments: [String]) throws -> ProcessResult {
        try ProvisionProcess.provision(arguments, in: ws.root)
    }

    /// The names `search --json` answers for `query`, best first.
    func answers(_ query: String, _ extra: [String] = []) throws -> [String] {
        let result = try provision(["search", "--store", ws.store.path, "--json", query] + extra)
        result.expect(0, "search \(query)")
        let document = try JSONValue.parse(Data(result.stdout.utf8))
        return document["results"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
    }

    func testTheDemoSearchJobIndexesItsPlacesAndAnswersTheReadmesQueries() throws {
        let job = Demo.repositoryRoot.appendingPathComponent("Jobs/cities-search.json").path
        let applied = try provision(["apply", job, "--store", ws.store.path, "--progress", "json"])
        applied.expect(0)
        let events = applied.stderr.split(separator: "\n").compactMap { try? JSONValue.parse(Data($0.utf8)) }
        let pack = try XCTUnwrap(events.first { $0["event"]?.stringValue == "search-pack" })
        XCTAssertEqual(pack["built"], .bool(true))
        XCTAssertEqual(pack["tiles"]?.intValue, 1439, "every stored tile of the three regions is read")
        let entries = try XCTUnwrap(pack["entries"]?.intValue)
        XCTAssertGreaterThan(entries, 10)
        XCTAssertEqual(try answers("new y").first, "New York")
        XCTAssertEqual(try answers("lond").prefix(2), ["London", "City of London"], "the city ranks before its suburb")
        XCTAssertEqual(try answers("cite").first, "Île de la Cité", "diacritics are folded")
        XCTAssertEqual(try answers("lond", ["--region", "london"]), ["London"],
                       "the City of London lies east of the London region's bbox")
        // A second apply reads the same tiles: the pack is kept, byte for byte.
        let file = ws.store.appendingPathComponent("search/places.db")
        let before = try Data(contentsOf: file)
        let again = try provision(["apply", job, "--store", ws.store.path, "--progress", "json"])
        again.expect(0)
        XCTAssertEqual(try Data(contentsOf: file), before)
    }
}
