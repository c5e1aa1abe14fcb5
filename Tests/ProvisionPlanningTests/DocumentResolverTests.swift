import Foundation
import ProvisionModel
import ProvisionPlanning
import TileMath
import XCTest

/// Resolving a job's styles and TileJSONs through a fetch function, without I/O.
final class DocumentResolverTests: XCTestCase {
    private static let styleURL = "https://example.com/style.json"
    private static let tileJSONURL = "https://example.com/tiles.json"
    private static let style = #"""
    {"version": 8, "sources": {"s": {"type": "vector", "url": "https://example.com/tiles.json"}},
     "layers": [{"id": "bg", "type": "background"}]}
    """#
    private static let tileJSON = #"{"tilejson": "3.0.0", "tiles": ["https://example.com/t/{z}/{x}/{y}.pbf"], "maxzoom": 14}"#

    private func job() -> Job {
        Job(name: "t", stylePacks: [StylePack(id: "streets", style: Self.styleURL)],
            regions: [Region(id: "r", name: "R", area: .bbox(BoundingBox(west: 0, south: 0, east: 1, north: 1)),
                             minZoom: 0, maxZoom: 2, stylePacks: ["streets"], tilesets: [])])
    }

    /// A resolver whose fetch answers from `answers` and records what was asked.
    private func resolver(_ answers: [String: Result<FetchedBody, FetchFailure>], stored: [String: Data] = [:],
                          asked: UnsafeMutablePointer<[String]>? = nil) throws -> DocumentResolver {
        let job = job()
        return DocumentResolver(job: job, credentials: try Credentials.resolve(job: job, environment: [:]), fetch: { requests in
            asked?.pointee += requests.map(\.url)
            var results: [String: Result<FetchedBody, FetchFailure>] = [:]
            for request in requests { results[request.url] = answers[request.url] ?? .failure(.notFound) }
            return results
        }, storedCopy: { stored[$0] })
    }

    private func body(_ text: String) -> Result<FetchedBody, FetchFailure> { .success(FetchedBody(data: Data(text.utf8))) }

    func testStylesThenTileJSONsAreFetchedAndResolved() throws {
        var asked: [String] = []
        let input = try withUnsafeMutablePointer(to: &asked) { pointer in
            try resolver([Self.styleURL: body(Self.style), Self.tileJSONURL: body(Self.tileJSON)], asked: pointer)
                .resolve(jobDigest: "sha256:x", epoch: 7)
        }
        XCTAssertEqual(asked, [Self.styleURL, Self.tileJSONURL], "the style first, then the TileJSON it names")
        XCTAssertEqual(input.epoch, 7)
        XCTAssertEqual(input.jobDigest, "sha256:x")
        XCTAssertEqual(input.packs["streets"]?.tileSources.map(\.template), ["https://example.com/t/{z}/{x}/{y}.pbf"])
        XCTAssertEqual(Set(input.documents.keys), [Self.styleURL, Self.tileJSONURL])
    }

    /// Issue 20: a plan resolved from the store's own copies would say "no changes" while it
    /// checked nothing; an origin that fails is unavailable (69) though the store holds a copy.
    func testTheStoredCopyDoesNotStandInForAnOriginThatFails() throws {
        let stored = [Self.tileJSONURL: Data(Self.tileJSON.utf8), Self.styleURL: Data(Self.style.utf8)]
        for failure in [FetchFailure.status(503), .transport("Connection refused"), .notFound] {
            XCTAssertThrowsError(try resolver([Self.styleURL: .failure(failure)], stored: stored).resolve(jobDigest: "d", epoch: 0),
                                 "\(failure)") { error in
                let failure = error as? DocumentError
                XCTAssertEqual(failure?.kind, .unavailable)
                XCTAssertTrue(failure?.message.contains("\(Self.styleURL) (style pack 'streets')") == true, "\(error)")
                XCTAssertTrue(failure?.message.contains("the store holds a copy, but whether upstream changed it cannot be checked")
                              == true, "\(error)")
            }
        }
    }

    /// `offline` (`plan --offline`): the store's copies, nothing fetched; a copy the store lacks
    /// is unavailable, named.
    func testOfflineResolvesFromTheStoresCopiesWithoutFetching() throws {
        var asked: [String] = []
        let stored = [Self.tileJSONURL: Data(Self.tileJSON.utf8), Self.styleURL: Data(Self.style.utf8)]
        let input = try withUnsafeMutablePointer(to: &asked) { pointer in
            var resolver = try resolver([:], stored: stored, asked: pointer)
            resolver.offline = true
            return try resolver.resolve(jobDigest: "d", epoch: 0)
        }
        XCTAssertEqual(asked, [], "nothing is fetched")
        XCTAssertEqual(input.documents[Self.styleURL]?.data, Data(Self.style.utf8))
        XCTAssertNotNil(input.packs["streets"])

        var lacking = try resolver([:], stored: [Self.styleURL: Data(Self.style.utf8)])
        lacking.offline = true
        XCTAssertThrowsError(try lacking.resolve(jobDigest: "d", epoch: 0)) { error in
            let failure = error as? DocumentError
            XCTAssertEqual(failure?.kind, .unavailable)
            XCTAssertTrue(failure?.message.contains("the store holds no copy of a document the plan needs") == true, "\(error)")
            XCTAssertTrue(failure?.message.contains("\(Self.tileJSONURL) (style pack 'streets')") == true, "\(error)")
        }
    }

    func testFailuresAreTold() throws {
        let cases: [(name: String, answers: [String: Result<FetchedBody, FetchFailure>], kind: DocumentError.Kind, message: String)] = [
            ("unavailable", [Self.styleURL: .failure(.status(503))], .unavailable,
             "cannot fetch a document the plan needs:\n  \(Self.styleURL) (style pack 'streets'): HTTP 503"),
            ("refused", [Self.styleURL: .failure(.refused(401))], .unavailable, "the access token was refused"),
            ("401 without a key", [Self.styleURL: .failure(.status(401))], .unavailable,
             "\(Self.styleURL) (style pack 'streets'): HTTP 401 (the request carried no key or token)"),
            ("not JSON", [Self.styleURL: body("<html>")], .unusable, "\(Self.styleURL) (style pack 'streets') is not valid JSON"),
            ("unusable", [Self.styleURL: .failure(.unusableDocument("nested past the cap"))], .unusable,
             "style \(Self.styleURL) of style pack 'streets' cannot be used"),
            ("TileJSON missing", [Self.styleURL: body(Self.style)], .unavailable, "\(Self.tileJSONURL) (style pack 'streets'): not found"),
        ]
        for c in cases {
            XCTAssertThrowsError(try resolver(c.answers).resolve(jobDigest: "d", epoch: 0), c.name) { error in
                let failure = error as? DocumentError
                XCTAssertEqual(failure?.kind, c.kind, c.name)
                XCTAssertTrue(failure?.message.contains(c.message) == true, "\(c.name): \(failure?.message ?? "\(error)")")
            }
        }
    }
}
