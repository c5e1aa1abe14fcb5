import Foundation
import PlaceIndex
import ProvisionFoundation
import ProvisionStore
import ProvisionTestSupport
import TileMath
import XCTest

/// A place index built and written by a test.
struct Built {
    var entries: [PlaceEntry]
    var report: PlaceIndexReport
    var url: URL
    var seconds: Double
}

extension XCTestCase {
    /// A directory removed when the test ends.
    func scratch() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("place-index-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }

    /// The test world's index (or that of `tiles`) written to `search/helsinki.db` of a scratch directory.
    func build(_ tiles: [(TileID, Data)] = TestWorld.encodedTiles(), regions: [PlaceRegion] = [],
               file: String = "search/helsinki.db") throws -> Built {
        let started = Date()
        let builder = PlaceIndexBuilder(options: PlaceIndexOptions(schema: .openMapTiles, regions: regions))
        for (tile, data) in tiles { try builder.add(tile: tile, data: data) }
        let (entries, report) = try builder.finish()
        let url = try scratch().appendingPathComponent(file)
        try PlaceIndexDatabase.write(entries, metadata: PlaceIndexTests.metadata, to: url)
        return Built(entries: entries, report: report, url: url, seconds: Date().timeIntervalSince(started))
    }
}

/// The place index of the test world, built from its tiles and written as a search pack.
final class PlaceIndexTests: XCTestCase {
    static let metadata = PlaceIndexMetadata(pack: "helsinki", sources: ["https://tiles.example/omt.json"],
                                             attribution: "© OpenMapTiles © OpenStreetMap contributors",
                                             buildTime: "2026-12-04T12:00:00Z", tileSchema: "openmaptiles",
                                             nameFields: PlaceIndexOptions.defaultNameFields)

    // MARK: One entry per real-world feature

    func testStreetsAreOneEntryPerConnectedPartAndPointsOneEntryEach() throws {
        let built = try build()
        var truth: [String: Int] = [:]
        for f in TestWorld.features { truth[TestWorld.name(f), default: 0] += 1 }
        var found: [String: Int] = [:]
        for e in built.entries { found[e.names[0], default: 0] += 1 }
        XCTAssertEqual(found, truth, "one entry per real-world feature (Rantatie and R-kioski are two each)")
        // Hämeentie crosses several z14 tiles and is repeated at 12, 13 and 14: still one entry.
        let hameentie = try XCTUnwrap(built.entries.first { $0.names == ["Hämeentie"] })
        XCTAssertEqual(hameentie.shape, .line)
        XCTAssertEqual(hameentie.minZoom, 12)
        XCTAssertEqual(hameentie.maxZoom, 14)
        XCTAssertEqual(hameentie.rank, 3, "class order of primary (after motorway, trunk)")
        let pieces = TestWorld.tiles.filter { $0.z == 14 }.filter { tile in
            VectorTileEncoder.geometry(TestWorld.tileFeatures.first { TestWorld.name($0) == "Hämeentie" }!.geometry,
                                       tile: tile, extent: 4096, buffer: 0) != nil
        }
        XCTAssertGreaterThan(pieces.count, 3, "the street really is cut by tile edges")
        let mannerheimintie = built.entries.filter { $0.names == ["Mannerheimintie"] }
        XCTAssertEqual(mannerheimintie.map(\.featureClass), ["primary"], "one street, its most important class")
        let kaivopuisto = TestWorld.features.first { TestWorld.name($0) == "Kaivopuisto" }!
        XCTAssertGreaterThan(TestWorld.tiles.filter { $0.z == 14 }.filter {
            VectorTileEncoder.geometry(kaivopuisto.geometry, tile: $0, extent: 4096, buffer: 0) != nil
        }.count, 1, "the park really is cut by a tile edge")
        XCTAssertEqual(built.entries.filter { $0.names == ["Kaivopuisto"] }.map(\.shape), [.polygon])
        let rajakivi = built.entries.filter { $0.names == ["Rajakivi"] }
        XCTAssertEqual(rajakivi.count, 1, "a point on a tile edge, in two tiles' buffers at three zooms, is one entry")
        let helsinki = try XCTUnwrap(built.entries.first { $0.names == ["Helsinki"] })
        XCTAssertEqual(helsinki.rank, 1)
        XCTAssertEqual(helsinki.minZoom, 12)
        let bay = try XCTUnwrap(built.entries.first { $0.names[0] == "Töölönlahti" })
        XCTAssertEqual(bay.names, ["Töölönlahti", "Töölö Bay"])
    }

    /// The test world at `zooms`, read `times` times, into a builder holding at most `budget` bytes.
    private func read(_ zooms: ClosedRange<Int>, times: Int, budget: Int = 64 << 20,
                      watch: (PlaceIndexBuilder) -> Void = { _ in }) throws -> PlaceIndexBuilder {
        let builder = PlaceIndexBuilder(options: PlaceIndexOptions(schema: .openMapTiles, memoryBudget: budget,
                                                                   sortDirectory: try scratch()))
        for _ in 0..<times {
            for z in zooms {
                let nw = WebMercator.tile(containing: TestWorld.p(TestWorld.area.west, TestWorld.area.north), zoom: z)
                let se = WebMercator.tile(containing: TestWorld.p(TestWorld.area.east, TestWorld.area.south), zoom: z)
                for x in nw.x...se.x {
                    for y in nw.y...se.y {
                        let tile = TileID(z: z, x: x, y: y)
                        let data = VectorTileEncoder.encode(tile, features: TestWorld.tileFeatures)
                        try builder.add(tile: tile, data: data)
                        watch(builder)
                    }
                }
            }
        }
        return builder
    }

    func testZoomsOrRepeatedTilesAddNoEntries() throws {
        let entries = try read(12...14, times: 1).finish().entries
        let more = try read(6...14, times: 3).finish().entries
        XCTAssertEqual(more.map(\.names), entries.map(\.names))
        XCTAssertEqual(more.map(\.minZoom).min(), 6)
    }

    func testWhatIsHeldStaysWithinTheBudgetAndSpillingChangesNothing() throws {
        let whole = try read(6...14, times: 3)
        XCTAssertEqual(whole.spilledRuns, 0, "the test world fits in the default budget")
        let entries = try whole.finish().entries
        // A budget a few features large: what is held never passes it by more than one tile's
        // features, and the rest waits on disk in many runs, merged back in the same order.
        let budget = 1 << 10
        var mostHeld = 0
        let spilled = try read(6...14, times: 3, budget: budget) { mostHeld = max(mostHeld, $0.heldBytes) }
        XCTAssertLessThan(mostHeld, budget)
        XCTAssertGreaterThan(spilled.spilledRuns, 20)
        XCTAssertEqual(try spilled.finish().entries, entries)
        // Nothing is left on disk: the runs' files are unlinked as they are made.
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: spilled.options.sortDirectory!.path), [])
    }

    func testARunThatCannotBeWrittenIsAnErrorNamingTheDirectory() throws {
        let gone = try scratch().appendingPathComponent("missing")
        let options = PlaceIndexOptions(schema: .openMapTiles, memoryBudget: 1, sortDirectory: gone)
        let builder = PlaceIndexBuilder(options: options)
        let (tile, data) = TestWorld.encodedTiles()[0]
        XCTAssertThrowsError(try builder.add(tile: tile, data: data)) { error in
            let failure = error as? ExternalSorter.FileError
            XCTAssertEqual(failure?.operation, "create")
            XCTAssertEqual(failure?.code, ENOENT)
            XCTAssertTrue("\(error)".contains(gone.path), "\(error)")
        }
    }

    func testEntriesHandedOutAsMadeAreAllTheEntriesSortedAndWriteTheSameFile() throws {
        func builder() throws -> PlaceIndexBuilder {
            let builder = PlaceIndexBuilder(options: PlaceIndexOptions(schema: .openMapTiles))
            for (tile, data) in TestWorld.encodedTiles() { try builder.add(tile: tile, data: data) }
            return builder
        }
        var handed: [PlaceEntry] = []
        let report = try builder().finish { handed.append($0) }
        let built = try build()
        XCTAssertEqual(handed, built.entries)
        XCTAssertEqual(report.entries, handed.count)
        // Sorted group by group is sorted as a whole.
        let sorted = handed.sorted { a, b in
            if a.kind != b.kind { return a.kind < b.kind }
            if a.names != b.names { return a.names.lexicographicallyPrecedes(b.names) }
            return (a.layer, a.featureClass, a.subclass, a.position.lng, a.position.lat)
                < (b.layer, b.featureClass, b.subclass, b.position.lng, b.position.lat)
        }
        XCTAssertEqual(handed, sorted)
        // Written as they come, the metadata (which counts them) last: the same bytes.
        let url = try scratch().appendingPathComponent("streamed.db")
        let count = try PlaceIndexDatabase.write(metadata: PlaceIndexTests.metadata, to: url) { add in
            _ = try builder().finish(add)
        }
        XCTAssertEqual(count, handed.count)
        XCTAssertEqual(try Data(contentsOf: url), try Data(contentsOf: built.url))
    }

    func testPositionsLieOnOrInsideTheirFeatures() throws {
        let built = try build()
        for f in TestWorld.features {
            let entries = built.entries.filter { $0.names[0] == TestWorld.name(f) }
            let error = entries.map { TestWorld.error($0.position, f.geometry) }.min() ?? .infinity
            switch f.geometry {
            case .polygon: XCTAssertEqual(error, 0, "\(TestWorld.name(f)) inside its polygon")
            default: XCTAssertLessThan(error, 1.0, "\(TestWorld.name(f)) on its feature (tile grid ≈ 0.6 m at z14)")
            }
        }
        // The U-shaped park's box centre is in its notch, outside the park; the entry is not.
        let park = try XCTUnwrap(built.entries.first { $0.names == ["Hesperian puisto"] })
        XCTAssertFalse(park.position.lng > 24.9195 && park.position.lng < 24.9255 && park.position.lat > 60.1845)
        let courtyard = try XCTUnwrap(built.entries.first { $0.names == ["Sinebrychoffin puisto"] })
        XCTAssertFalse(courtyard.position.lng > 24.930 && courtyard.position.lng < 24.934
                       && courtyard.position.lat > 60.157 && courtyard.position.lat < 60.160, "not in the hole")
    }

    // MARK: Answers

    func testEveryUniqueExactNameIsFoundFirstAndTheQualityTable() throws {
        let built = try build()
        var counts: [String: Int] = [:]
        for f in TestWorld.features { counts[TestWorld.name(f), default: 0] += 1 }
        struct Row { var n = 0, diacritics = 0; var exact = [0, 0], prefix = [0, 0], folded = [0, 0]; var errors: [Double] = [] }
        var rows: [PlaceKind: Row] = [:]
        var misses: [String] = []
        func hit(_ query: String, _ name: String) throws -> [Int] {
            let results = try PlaceIndexDatabase.search(built.url, query: query, limit: 5).map(\.name)
            return [results.prefix(1).contains(name) ? 1 : 0, results.contains(name) ? 1 : 0]
        }
        for f in TestWorld.features {
            let name = TestWorld.name(f)
            var row = rows[TestWorld.kind(f)] ?? Row()
            let entries = built.entries.filter { $0.names[0] == name }
            row.errors.append(entries.map { TestWorld.error($0.position, f.geometry) }.min() ?? .infinity)
            if counts[name] == 1 {
                row.n += 1
                let exact = try hit(name, name)
                XCTAssertEqual(exact[0], 1, "\(name) found first by its exact name")
                row.exact = zip(row.exact, exact).map(+)
                var words = name.split(separator: " ").map(String.init)
                words[words.count - 1] = String(words[words.count - 1].prefix(max(2, (words[words.count - 1].count + 1) / 2)))
                let prefix = try hit(words.joined(separator: " "), name)
                if prefix[0] == 0 { misses.append("prefix \(words.joined(separator: " ")) → not \(name) first") }
                row.prefix = zip(row.prefix, prefix).map(+)
                let folded = name.folding(options: .diacriticInsensitive, locale: nil)
                if folded != name {
                    row.diacritics += 1
                    let found = try hit(folded, name)
                    XCTAssertEqual(found[0], 1, "\(folded) finds \(name) first")
                    row.folded = zip(row.folded, found).map(+)
                }
            }
            rows[TestWorld.kind(f)] = row
        }
        var table = "\nkind      unique  exact@1 exact@5  prefix@1 prefix@5  no-diacritics@1 @5 (of n)  position error m: median max\n"
        for kind in PlaceKind.allCases {
            guard let r = rows[kind] else { continue }
            let e = r.errors.sorted()
            table += kind.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0)
            table += String(format: " %6d  %7d %7d  %8d %8d  %15d %2d (%d)  %22.2f %.2f\n", r.n,
                            r.exact[0], r.exact[1], r.prefix[0], r.prefix[1], r.folded[0], r.folded[1], r.diacritics,
                            e[e.count / 2], e.last!)
        }
        let size = try FileManager.default.attributesOfItem(atPath: built.url.path)[.size] as! Int
        table += "entries \(built.entries.count), tiles \(built.report.tiles), file \(size) bytes, "
            + String(format: "built in %.3f s (debug build)\n", built.seconds)
        table += misses.joined(separator: "\n")
        print(table)
    }

    func testDiacriticFreeAndPrefixQueries() throws {
        let built = try build()
        XCTAssertEqual(try PlaceIndexDatabase.search(built.url, query: "hameentie").first?.name, "Hämeentie")
        XCTAssertEqual(try PlaceIndexDatabase.search(built.url, query: "HÄMEENTIE").first?.name, "Hämeentie")
        XCTAssertEqual(try PlaceIndexDatabase.search(built.url, query: "sornaisten ran").first?.name, "Sörnäisten rantatie")
        XCTAssertEqual(try PlaceIndexDatabase.search(built.url, query: "cafe ek").first?.name, "Café Ekberg")
        XCTAssertEqual(try PlaceIndexDatabase.search(built.url, query: "Toolo Bay").first?.name, "Töölönlahti", "name:en")
        // "Kallio" is a suburb; "Kalliola", a town ranked above it, matches the prefix: the exact name wins.
        let kallio = try PlaceIndexDatabase.search(built.url, query: "kallio")
        XCTAssertEqual(kallio.map(\.name), ["Kallio", "Kalliola"])
        XCTAssertEqual(kallio.map(\.exact), [true, false])
        XCTAssertEqual(try PlaceIndexDatabase.search(built.url, query: "kal").first?.name, "Kalliola", "prefix: by rank")
        // Near me: the nearer of the two R-kioski first; a box keeps only what is in it.
        let east = try PlaceIndexDatabase.search(built.url, query: "r-kioski", near: LngLat(lng: 24.97, lat: 60.19))
        XCTAssertEqual(east.map { ($0.position.lng * 1e4).rounded() / 1e4 }, [24.97, 24.93])
        let west = try PlaceIndexDatabase.search(built.url, query: "r kioski", near: LngLat(lng: 24.93, lat: 60.16),
                                                 box: BoundingBox(west: 24.92, south: 60.15, east: 24.94, north: 60.17))
        XCTAssertEqual(west.map { ($0.position.lng * 1e4).rounded() / 1e4 }, [24.93])
        XCTAssertEqual(try PlaceIndexDatabase.search(built.url, query: "  ,; "), [])
        XCTAssertEqual(try PlaceIndexDatabase.search(built.url, query: "AND OR NOT NEAR \" * ( ) -"), [], "no FTS syntax from the user")
    }

    func testRegionsTagEntriesByTheirPosition() throws {
        let built = try build(regions: [
            PlaceRegion(id: "west", area: .bbox(BoundingBox(west: 24.90, south: 60.15, east: 24.94, north: 60.20))),
            PlaceRegion(id: "kallio", area: .polygons([Polygon(rings: [[TestWorld.p(24.94, 60.18), TestWorld.p(24.96, 60.18),
                                                                           TestWorld.p(24.96, 60.19), TestWorld.p(24.94, 60.19)]])])),
        ])
        XCTAssertEqual(built.entries.first { $0.names == ["Kallio"] }?.regions, ["kallio"])
        XCTAssertEqual(built.entries.first { $0.names == ["Kiasma"] }?.regions, ["west"])
        XCTAssertEqual(built.entries.first { $0.names == ["Kalliola"] }?.regions, [])
        let db = try SQLiteDatabase(path: built.url.path, options: .init(readOnly: true, create: false))
        let kallio = try db.query("SELECT p.name FROM place_regions r JOIN places p ON p.id = r.place_id WHERE r.region = 'kallio' ORDER BY p.name") { $0.text(0) }
        XCTAssertTrue(kallio.contains("Kallio"))
        XCTAssertFalse(kallio.contains("Kiasma"))
    }
}

extension TestWorld {
    /// The kind the OpenMapTiles schema gives a feature's layer.
    static func kind(_ f: TestFeature) -> PlaceKind { PlaceSchema.openMapTiles.layers[f.layer]!.kind }
}
