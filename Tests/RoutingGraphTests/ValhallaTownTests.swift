import Foundation
import ProvisionTestSupport
import RoutingGraph
import TileMath
import XCTest

/// RoutingGraph against Valhalla itself (PyPI pyvalhalla 3.9.1): the test town's graph built by
/// `valhalla_build_tiles`, extracts cut by `valhalla_build_extract`, routes by `valhalla.Actor`.
final class ValhallaTownTests: XCTestCase {
    static let townBox = BoundingBox(west: 5.02, south: 50.02, east: 5.73, north: 50.48)

    var scratch: URL!

    override func setUpWithError() throws {
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("routing-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: scratch)
    }

    /// The town's tile tree: tile → bytes, from the paths the build wrote.
    func townTiles() throws -> (ValhallaFixture.Town, [GraphTileID: [UInt8]]) {
        let town = try ValhallaFixture.town()
        var tiles: [GraphTileID: [UInt8]] = [:]
        let root = town.tileDirectory.path
        let enumerator = try XCTUnwrap(FileManager.default.enumerator(atPath: root))
        while let relative = enumerator.nextObject() as? String {
            guard relative.hasSuffix(".gph") else { continue }
            let tile = try GraphTileID.parse(path: relative)
            tiles[tile] = Array(try Data(contentsOf: URL(fileURLWithPath: root).appendingPathComponent(relative)))
        }
        return (town, tiles)
    }

    /// Every tile of the built town passes the header check with its own path's id and fails with
    /// any other tile's id; all share one build identity (the OSM input's changeset, Valhalla 3.9.1).
    func testEveryTownTilePassesTheHeaderCheckWithItsOwnIDOnly() throws {
        let (town, tiles) = try townTiles()
        print("valhalla town: \(tiles.count) tiles, \(tiles.values.reduce(0) { $0 + $1.count }) bytes, "
              + "built in \(String(format: "%.2f", town.buildSeconds)) s")
        XCTAssertEqual(tiles.count, 8)
        var identities = Set<GraphBuildIdentity>()
        for (tile, bytes) in tiles {
            let header = try GraphTileHeader.check(bytes, expected: tile)
            identities.insert(header.buildIdentity)
            for other in tiles.keys where other != tile {
                XCTAssertThrowsError(try GraphTileHeader.check(bytes, expected: other)) { error in
                    XCTAssertEqual(error as? GraphTileHeaderError, .graphIDMismatch(expected: other, found: tile.graphID))
                }
            }
        }
        XCTAssertEqual(identities, [GraphBuildIdentity(datasetID: 4242, version: "3.9.1")])
    }

    /// Valhalla's own graph ids (`locate`'s edge ids: level, tile id, object id packed in one value)
    /// decode to the tile it names, and a level-2 edge's tile is our tile of the point it was found at.
    func testValhallasEdgeIDsDecodeToOurTiles() throws {
        let (town, _) = try townTiles()
        let points = [(5.12, 50.12), (5.42, 50.14), (5.62, 50.14), (5.12, 50.36), (5.42, 50.36), (5.62, 50.36),
                      (5.10, 50.26), (5.37, 50.30), (5.50, 50.40)]
        let requests: [[String: Any]] = points.map { ["locations": [["lon": $0.0, "lat": $0.1]], "costing": "auto", "verbose": true] }
        let answers = try ValhallaFixture.route(requests, tileDirectory: town.tileDirectory, action: "locate")
        var levelsSeen = Set<Int>()
        for (n, answer) in answers.enumerated() {
            let located = try XCTUnwrap((answer["locations"] as? [[String: Any]])?.first, "point \(n): \(answer)")
            let edges = try XCTUnwrap(located["edges"] as? [[String: Any]], "point \(n)")
            XCTAssertFalse(edges.isEmpty, "point \(n)")
            for edge in edges {
                let id = try XCTUnwrap(edge["edge_id"] as? [String: Any])
                let value = try XCTUnwrap((id["value"] as? NSNumber)?.uint64Value)
                let level = try XCTUnwrap(id["level"] as? Int), index = try XCTUnwrap(id["tile_id"] as? Int)
                let tile = try XCTUnwrap(GraphTileID(graphID: value))
                XCTAssertEqual(tile.level.level, level)
                XCTAssertEqual(tile.index, index)
                levelsSeen.insert(level)
                if level == 2, let lng = edge["correlated_lon"] as? Double, let lat = edge["correlated_lat"] as? Double {
                    XCTAssertEqual(tile.level.tileIndex(lng: lng, lat: lat), index, "edge at (\(lng), \(lat))")
                }
            }
        }
        XCTAssertEqual(levelsSeen, [0, 1, 2])
    }

    /// A second build of the same town (another changeset in its OSM input) has another dataset id
    /// in every tile: a pack mixing the two is refused naming a tile of each build.
    func testTilesOfTwoBuildsAreRefusedNamingBoth() throws {
        let (_, tiles) = try townTiles()
        let second = try ValhallaFixture.town(changeset: 5151)
        var identities: [(GraphTileID, GraphBuildIdentity)] = []
        for tile in tiles.keys.sorted() {
            let bytes = Array(try Data(contentsOf: second.tileDirectory.appendingPathComponent(tile.path)))
            identities.append((tile, try GraphTileHeader.check(bytes, expected: tile).buildIdentity))
        }
        let build = GraphBuildIdentity(datasetID: 5151, version: "3.9.1")
        XCTAssertEqual(try GraphBuildIdentity.single(identities), build)
        let first = GraphBuildIdentity(datasetID: 4242, version: "3.9.1")
        let mixed = tiles.keys.sorted().map { tile in
            (tile, tile.level.level == 1 ? build : (try? GraphTileHeader.check(tiles[tile] ?? [], expected: tile).buildIdentity) ?? build)
        }
        XCTAssertThrowsError(try GraphBuildIdentity.single(mixed)) { error in
            let tile0 = tiles.keys.sorted()[0], tile1 = tiles.keys.sorted()[1]
            XCTAssertEqual(error as? MixedBuildsError, MixedBuildsError(first: tile0, firstBuild: first, other: tile1, otherBuild: build))
            XCTAssertEqual("\(error)", "graph tiles of two builds: 0/003/196.gph is dataset 4242, Valhalla 3.9.1, "
                           + "1/050/585.gph is dataset 5151, Valhalla 3.9.1")
        }
        XCTAssertNil(try GraphBuildIdentity.single([]))
    }

    /// `valhalla_build_extract`'s own tar, damaged: an index entry pointing past the file, a file cut
    /// inside its last tile, an index entry naming another tile; and a real tile with its version
    /// bytes overwritten fails the checked read.
    func testDamagedValhallaExtractsAreTypedErrors() throws {
        let (town, tiles) = try townTiles()
        let theirs = scratch.appendingPathComponent("valhalla.tar")
        try ValhallaFixture.buildExtract(town: town, output: theirs)
        let good = try Data(contentsOf: theirs)
        let entries = try Self.indexEntries(theirs)
        let last = try XCTUnwrap(GraphTileID(graphID: UInt64(try XCTUnwrap(entries.last).graphID)))
        let damaged = scratch.appendingPathComponent("damaged.tar")

        var pastEnd = good
        pastEnd.replaceSubrange(512..<520, with: withUnsafeBytes(of: UInt64(good.count).littleEndian) { Data($0) })
        try pastEnd.write(to: damaged)
        let first = try XCTUnwrap(GraphTileID(graphID: UInt64(entries[0].graphID)))
        XCTAssertThrowsError(try TileExtractReader(url: damaged)) { error in
            XCTAssertEqual(error as? TileExtractError, .entryPastEnd(path: damaged.path, tile: first,
                                                                     end: UInt64(good.count) + UInt64(entries[0].size),
                                                                     fileSize: UInt64(good.count)))
        }
        let cut = Int(try XCTUnwrap(entries.last).offset) + 100
        try good.prefix(cut).write(to: damaged)
        XCTAssertThrowsError(try TileExtractReader(url: damaged)) { error in
            guard case .entryPastEnd(_, let tile, _, let size)? = error as? TileExtractError else { return XCTFail("\(error)") }
            XCTAssertEqual(tile, last)
            XCTAssertEqual(size, UInt64(cut))
        }
        var renamed = good
        renamed.replaceSubrange(520..<524, with: withUnsafeBytes(of: UInt32(last.graphID).littleEndian) { Data($0) })
        try renamed.write(to: damaged)
        XCTAssertThrowsError(try TileExtractReader(url: damaged)) { error in
            XCTAssertEqual(error as? TileExtractError,
                           .memberMismatch(path: damaged.path, tile: last, found: "member \"\(first.path)\" of \(entries[0].size) bytes"))
        }

        var version = tiles[first] ?? []
        version.replaceSubrange(16..<32, with: Array("3.9.1\u{7}".utf8) + [UInt8](repeating: 0, count: 10))
        var changed = tiles
        changed[first] = version
        let ours = scratch.appendingPathComponent("ours.tar")
        try TileExtractWriter.write(to: ours, sizes: changed.mapValues(\.count)) { changed[$0] ?? [] }
        XCTAssertThrowsError(try TileExtractReader(url: ours).readChecked(first)) { error in
            XCTAssertEqual(error as? GraphTileHeaderError, .versionNotText(bytes: Array("3.9.1\u{7}".utf8) + [UInt8](repeating: 0, count: 10)))
        }
    }

    /// Our cover of the town's bbox, on the levels the build has, is exactly the set of tile files
    /// it wrote; for boxes inside the town it equals the members `valhalla_build_extract --bbox`
    /// cuts, except that Valhalla also takes cells a box only touches on their east or north edge.
    func testCoverEqualsTheBuiltTilesAndValhallaBuildExtractBoundingBoxes() throws {
        let (town, tiles) = try townTiles()
        let levels = Set(tiles.keys.map(\.level))
        XCTAssertEqual(levels, Set(GraphLevel.roads))
        let cover = GraphTileCover.covers(.bbox(Self.townBox), levels: levels.sorted()).flatMap { Array($0) }
        XCTAssertEqual(cover, tiles.keys.sorted())

        let boxes: [(BoundingBox, extraInValhalla: Set<Int>)] = [
            (Self.townBox, []),
            (BoundingBox(west: 5.1, south: 50.1, east: 5.3, north: 50.2), []),
            (BoundingBox(west: 5.3, south: 50.3, east: 5.7, north: 50.45), []),
            (BoundingBox(west: 5.0, south: 50.0, east: 5.25, north: 50.25), []),
            // On the west and south boundaries: Valhalla adds the cells the box touches there.
            (BoundingBox(west: 5.25, south: 50.25, east: 5.4, north: 50.4), [807_140, 807_141, 808_580]),
        ]
        for (box, extra) in boxes {
            let ours = GraphTileCover.covers(.bbox(box), levels: levels.sorted()).flatMap { Array($0) }
                .filter { tiles[$0] != nil }
            let output = scratch.appendingPathComponent("bbox.tar")
            try ValhallaFixture.buildExtract(town: town, output: output,
                                             bbox: "\(box.west),\(box.south),\(box.east),\(box.north)")
            let valhalla = try TileExtractReader(url: output).tiles
            XCTAssertEqual(Set(valhalla).subtracting(ours).map(\.index).sorted(), extra.sorted(), "\(box)")
            XCTAssertTrue(Set(ours).isSubset(of: Set(valhalla)), "\(box)")
        }
    }

    /// Our extract of every town tile holds exactly the tile bytes of `valhalla_build_extract`'s tar,
    /// member for member, with index entries (id, size, in order) equal; offsets differ only by the
    /// pax headers Python's tarfile adds for its fractional mtimes. Ours is byte-identical across
    /// writes whatever order tiles are given in, and `tar` lists it with fixed owner, mode and time.
    func testOurExtractMatchesValhallaBuildExtractAndIsReproducible() throws {
        let (town, tiles) = try townTiles()
        let theirs = scratch.appendingPathComponent("valhalla.tar")
        try ValhallaFixture.buildExtract(town: town, output: theirs)
        let valhalla = try TileExtractReader(url: theirs)

        let ours = scratch.appendingPathComponent("ours.tar")
        let sizes = tiles.mapValues(\.count)
        var asked: [GraphTileID] = []
        let entries = try TileExtractWriter.write(to: ours, sizes: sizes) { tile in
            asked.append(tile)
            return tiles[tile] ?? []
        }
        XCTAssertEqual(asked, tiles.keys.sorted())
        let reader = try TileExtractReader(url: ours)
        XCTAssertEqual(reader.tiles, valhalla.tiles)
        for tile in reader.tiles {
            XCTAssertEqual(try reader.read(tile), try valhalla.read(tile), tile.path)
            XCTAssertEqual(try reader.readChecked(tile).header.buildIdentity.datasetID, 4242)
        }
        let theirEntries = try Self.indexEntries(theirs)
        XCTAssertEqual(try Self.indexEntries(ours), entries)
        XCTAssertEqual(entries.map(\.graphID), theirEntries.map(\.graphID))
        XCTAssertEqual(entries.map(\.size), theirEntries.map(\.size))
        // Offsets: ours are one 512-byte header per member; Valhalla's add a 1,024-byte pax record.
        for (n, (mine, valhallas)) in zip(entries, theirEntries).enumerated() {
            XCTAssertEqual(valhallas.offset - mine.offset, UInt64(1_024 * (n + 1)))
        }

        // Same tiles, shuffled input, another time: the same bytes.
        let again = scratch.appendingPathComponent("again.tar")
        var shuffled: [GraphTileID: Int] = [:]
        for tile in tiles.keys.sorted().reversed() { shuffled[tile] = sizes[tile] }
        try TileExtractWriter.write(to: again, sizes: shuffled) { tiles[$0] ?? [] }
        XCTAssertEqual(try Data(contentsOf: again), try Data(contentsOf: ours))
        XCTAssertEqual(try Data(contentsOf: ours).count % 10_240, 0)

        let listing = try Self.run("/usr/bin/tar", ["--numeric-owner", "-tvf", ours.path])
        let lines = listing.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        XCTAssertEqual(lines.map { String($0.last ?? "") }, ["index.bin"] + tiles.keys.sorted().map(\.path))
        for line in lines {
            XCTAssertEqual(line[0], "-rw-r--r--")
            XCTAssertEqual(line[1], "0/0")
            XCTAssertEqual(line[3], "1970-01-01")
        }
        let stamped = scratch.appendingPathComponent("stamped.tar")
        try TileExtractWriter.write(to: stamped, sizes: sizes, mtime: 1_700_000_000) { tiles[$0] ?? [] }
        XCTAssertTrue(try Self.run("/usr/bin/tar", ["--numeric-owner", "--utc", "-tvf", stamped.path]).contains("2023-11-14 22:13"))
    }

    /// Valhalla's Actor, configured with `mjolnir.tile_extract` = our tar and no `tile_dir`, routes
    /// the town's trips with the same shape, length and time as on the tile tree; on an extract of
    /// the west level-2 column only, a trip into the east finds no graph there.
    func testValhallaRoutesOnOurExtractAsOnTheTileTree() throws {
        let (town, tiles) = try townTiles()
        let ours = scratch.appendingPathComponent("town.tar")
        try TileExtractWriter.write(to: ours, sizes: tiles.mapValues(\.count)) { tiles[$0] ?? [] }
        func trip(_ from: (Double, Double), _ to: (Double, Double)) -> [String: Any] {
            ["locations": [["lon": from.0, "lat": from.1], ["lon": to.0, "lat": to.1]], "costing": "auto"]
        }
        let requests = [
            trip((5.06, 50.06), (5.70, 50.46)),  // south-west to north-east: residential, secondary, primary
            trip((5.03, 50.26), (5.72, 50.26)),  // along the motorway
            trip((5.37, 50.07), (5.34, 50.10)),  // north on the primary road, then the forbidden left turn
            trip((5.37, 50.07), (5.40, 50.10)),  // north on the primary road, then the allowed right turn
            trip((5.46, 50.31), (5.46, 50.39)),  // along a one-way street (Rue 12, north-bound)
            trip((5.46, 50.39), (5.46, 50.31)),  // against it
        ]
        let onTree = try ValhallaFixture.route(requests, tileDirectory: town.tileDirectory)
        let onExtract = try ValhallaFixture.route(requests, tileExtract: ours)
        for (n, (tree, extract)) in zip(onTree, onExtract).enumerated() {
            let treeTrip = try XCTUnwrap(tree["trip"] as? [String: Any], "request \(n) on the tree: \(tree)")
            let extractTrip = try XCTUnwrap(extract["trip"] as? [String: Any], "request \(n) on the extract: \(extract)")
            let treeSummary = try XCTUnwrap(treeTrip["summary"] as? [String: Any])
            let extractSummary = try XCTUnwrap(extractTrip["summary"] as? [String: Any])
            let length = try XCTUnwrap(treeSummary["length"] as? Double), time = try XCTUnwrap(treeSummary["time"] as? Double)
            XCTAssertGreaterThan(length, 1)
            XCTAssertEqual(extractSummary["length"] as? Double, length, "request \(n)")
            XCTAssertEqual(extractSummary["time"] as? Double, time, "request \(n)")
            let shapes = { (trip: [String: Any]) in ((trip["legs"] as? [[String: Any]]) ?? []).compactMap { $0["shape"] as? String } }
            XCTAssertEqual(shapes(extractTrip), shapes(treeTrip), "request \(n)")
            print("valhalla route \(n): length \(length) km, time \(time) s on the tile tree and on our extract")
        }
        func summary(_ n: Int) -> [String: Any] { ((onExtract[n]["trip"] as? [String: Any])?["summary"] as? [String: Any]) ?? [:] }
        func length(_ n: Int) -> Double { summary(n)["length"] as? Double ?? 0 }
        XCTAssertEqual(summary(1)["has_highway"] as? Bool, true, "the motorway trip uses the motorway")
        XCTAssertGreaterThan(length(2), length(3) + 3, "the no-left-turn restriction forces a detour")
        XCTAssertGreaterThan(length(5), length(4) + 3, "the one-way street forces a detour the other way")

        // Only the west level-2 column (and the coarse levels): the east end is off the graph.
        let west = GraphTileCover.covers(.bbox(BoundingBox(west: 5.02, south: 50.02, east: 5.2, north: 50.48)))
            .flatMap { Array($0) }.filter { tiles[$0] != nil }
        let partial = scratch.appendingPathComponent("west.tar")
        try TileExtractWriter.write(to: partial, sizes: Dictionary(uniqueKeysWithValues: west.map { ($0, tiles[$0]?.count ?? 0) })) {
            tiles[$0] ?? []
        }
        let cut = try ValhallaFixture.route([trip((5.06, 50.06), (5.12, 50.44)), trip((5.06, 50.06), (5.70, 50.46))],
                                            tileExtract: partial)
        XCTAssertNotNil(cut[0]["trip"], "a trip inside the west column routes: \(cut[0])")
        XCTAssertNil(cut[1]["trip"], "a trip into the east has no graph there: \(cut[1])")
    }

    /// The raw `index.bin` entries of a tar (the first member's body).
    static func indexEntries(_ url: URL) throws -> [TileExtractEntry] {
        let data = try Data(contentsOf: url)
        let sizeField = String(decoding: data[124..<135], as: UTF8.self)
        let size = try XCTUnwrap(Int(sizeField, radix: 8))
        return try XCTUnwrap(TileExtractEntry.decode(Array(data[512..<(512 + size)])))
    }

    static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ["TZ": "UTC", "LC_ALL": "C"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        return String(decoding: data, as: UTF8.self)
    }
}
