import Foundation
import ProvisionFoundation
import ProvisionTestSupport
import XCTest

/// Issue 22: a routing pack read from a tile extract over HTTP (`valhalla_build_extract`'s tar of
/// the Valhalla test town, served on loopback with byte ranges): its index once, then each tile by
/// range, through the same fetch loop as every download; a damaged index and an extract replaced
/// during the apply are named failures, and the pack holds exactly Valhalla's own cut.
final class RoutingExtractOverHTTPTests: WorkspaceTestCase {
    private let epoch = ["SOURCE_DATE_EPOCH": "1700000000"]
    private static let west = Demo.City(id: "west", name: "West", bbox: [4.90, 50.03, 5.20, 50.47])
    private static let east = Demo.City(id: "east", name: "East", bbox: [5.52, 50.03, 5.72, 50.22])

    private var tar: URL { ws.store.appendingPathComponent("routing/drive.tar") }
    private var extractURL: String { ws.server.baseURL + "/town.tar" }

    /// What the server answers for `/town.tar`: the bytes and ETag of each request, by its number
    /// (from 0), so a test can replace the file between two requests.
    private final class Served: Sendable {
        let answer = Mutex<@Sendable (Int) -> (Data, String)>({ _ in (Data(), "\"empty\"") })
        let count = Mutex(0)
    }
    private let served = Served()

    /// Serves `answer` at `/town.tar` with byte ranges.
    private func serveExtract(_ answer: @escaping @Sendable (Int) -> (Data, String)) {
        served.answer.withLock { $0 = answer }
        served.count.withLock { $0 = 0 }
        let served = self.served
        ws.server.setHandler(prefix: "/town.tar") { request in
            let number = served.count.withLock { count -> Int in
                defer { count += 1 }
                return count
            }
            let (data, etag) = served.answer.read { $0 }(number)
            return .ranges(of: data, etag: etag, for: request)
        }
    }

    /// `valhalla_build_extract`'s tar of the whole town.
    private func townExtract() throws -> (town: ValhallaFixture.Town, bytes: Data) {
        let town = try ValhallaFixture.town()
        let theirs = ws.root.appendingPathComponent("town.tar")
        if !FileManager.default.fileExists(atPath: theirs.path) { try ValhallaFixture.buildExtract(town: town, output: theirs) }
        return (town, try Data(contentsOf: theirs))
    }

    /// A job over `cities` (drawn at z10 from the demo archive) whose regions need pack `drive`
    /// read from the extract at `extract`.
    private func writeJob(_ cities: [Demo.City], extract: String, name: String = "job.json",
                          origins: [(String, JSONValue)] = [], pack: [(String, JSONValue?)] = []) throws -> String {
        let regions = cities.map { $0.region(zoom: 10...10, extra: [("routingPacks", ["drive"])]) }
        guard case .object(var job) = Demo.job(regions: regions, origins: ws.origins(tiles: .mbtiles) + origins) else {
            throw CocoaError(.coderInvalidValue)
        }
        job["download"] = ["concurrency": 8, "retries": 1, "timeoutSeconds": 10, "missingTiles": "skip"]
        var routingPack = JSONObject()
        routingPack["id"] = "drive"
        routingPack["extract"] = .string(extract)
        for (key, value) in pack { routingPack[key] = value }  // nil removes the key
        job["routingPacks"] = [.object(routingPack)]
        return try ws.write(.object(job), to: name).path
    }

    /// The `Range` headers of the requests for the extract from the `from`-th on.
    private func ranges(from: Int = 0) -> [String] {
        ws.requests(under: "/town.tar").dropFirst(from).map { $0.headers["range"] ?? "none" }
    }

    /// The members of a tar extracted into a new directory: path → bytes (index.bin left out).
    private func members(of archive: URL) throws -> [String: Data] {
        let directory = ws.root.appendingPathComponent("members-\(archive.deletingPathExtension().lastPathComponent)")
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try ProvisionProcess.run(URL(fileURLWithPath: "/usr/bin/tar"), ["-xf", archive.path, "-C", directory.path], in: ws.root,
                                 environment: [:], timeout: 30).expect(0)
        var members: [String: Data] = [:]
        let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.isRegularFileKey])
        while let url = walker?.nextObject() as? URL {
            guard try url.resourceValues(forKeys: Set<URLResourceKey>([.isRegularFileKey])).isRegularFile == true else { continue }
            let path = String(url.standardizedFileURL.path.dropFirst(directory.standardizedFileURL.path.count + 1))
            if path != "index.bin" { members[path] = try Data(contentsOf: url) }
        }
        return members
    }

    private static func trip(_ from: (Double, Double), _ to: (Double, Double)) -> [String: Any] {
        ["locations": [["lon": from.0, "lat": from.1], ["lon": to.0, "lat": to.1]], "costing": "auto"]
    }

    func testAPackIsReadFromAnExtractOverHTTPByRangesAndRoutesAsTheWholeBuild() throws {
        let (town, bytes) = try townExtract()
        serveExtract { _ in (bytes, "\"town-1\"") }
        let job = try writeJob([Self.west, Self.east], extract: extractURL)
        let planned = try ws.provision("plan", "--json", job, environment: epoch)
        planned.expect(0)
        let pack = try XCTUnwrap(try parseJSON(planned.stdout)["routingPacks"]?.arrayValue?.first)
        let levels = (pack["levels"]?.arrayValue ?? []).map { level in ["level", "add", "remove", "keep"].map { level[$0]?.intValue ?? -1 } }
        XCTAssertEqual(levels, [[0, 1, 0, 0], [1, 1, 0, 1], [2, 3, 0, 2]], "absent cells known from the remote index")
        XCTAssertEqual(ranges(), ["bytes=0-65535"], "the plan reads the index only, once")
        // Bytes to add exactly as the remote index sizes each tile.
        let sizes = try RoutingTown.indexSizes(bytes)
        XCTAssertEqual(RoutingTown.levelValues(pack, "addBytes"), RoutingTown.bytesPerLevel(RoutingTown.tiles, sizes: sizes))
        XCTAssertEqual(pack["bytesToDownload"]?.intValue, RoutingTown.bytesPerLevel(RoutingTown.tiles, sizes: sizes).reduce(0, +))

        let applied = try ws.provision("apply", job, environment: epoch)
        applied.expect(0)
        let applyRanges = ranges(from: 1)
        XCTAssertEqual(applyRanges.first, "bytes=0-65535", "the index once")
        XCTAssertEqual(applyRanges.count, 6, "the index, then the five tiles: \(applyRanges)")
        XCTAssertFalse(applyRanges.dropFirst().contains("bytes=0-65535"))
        XCTAssertEqual(ws.requests(under: "/town.tar").filter { $0.headers["range"] == nil }.count, 0, "never the whole file")
        let record = try XCTUnwrap(try readJSON(ws.lock)["routingPacks"]?.arrayValue?.first)
        XCTAssertEqual(record["source"]?.stringValue, "extract:" + extractURL)
        XCTAssertEqual(record["tiles"]?.arrayValue?.count, 5)
        // Planned again: every tile kept, with the bytes the lock records; the east's level-2 tile as well.
        let replanned = try ws.provision("plan", "--json", job, environment: epoch)
        replanned.expect(0)
        let kept = try XCTUnwrap(try parseJSON(replanned.stdout)["routingPacks"]?.arrayValue?.first)
        let recorded = RoutingTown.recordedSizes(record)
        XCTAssertEqual(RoutingTown.levelValues(kept, "keepBytes"), RoutingTown.bytesPerLevel(RoutingTown.tiles, sizes: recorded))
        XCTAssertEqual(RoutingTown.levelValues(kept, "addBytes"), [0, 0, 0])
        let eastLevel2 = kept["regionTiles"]?.arrayValue?.first { $0["region"]?.stringValue == "east" && $0["level"]?.intValue == 2 }
        XCTAssertEqual(eastLevel2?["keepBytes"]?.intValue, recorded["2/000/807/142.gph"])
        let text = try ws.provision("plan", job, environment: epoch)
        XCTAssertTrue(text.stdout.contains("    region east level 2 +0 =1, bytes +0 B =\(ByteFormat.string(Int64(recorded["2/000/807/142.gph"] ?? 0)))\n"),
                      text.stdout)
        print("routing pack over HTTP, planned after its apply:\n" + text.stdout.split(separator: "\n").filter {
            $0.contains("routing pack") || $0.hasPrefix("      level") || $0.hasPrefix("    region")
        }.joined(separator: "\n"))

        // Valhalla on the pack alone routes inside each region as on the whole build, and not into
        // the north-east, which no region covers.
        let trips = [Self.trip((5.06, 50.06), (5.12, 50.44)), Self.trip((5.56, 50.06), (5.70, 50.20)),
                     Self.trip((5.06, 50.06), (5.70, 50.46))]
        let onBuild = try ValhallaFixture.route(trips, tileDirectory: town.tileDirectory)
        let onPack = try ValhallaFixture.route(trips, tileExtract: tar)
        let summary = { (answer: [String: Any]) in (answer["trip"] as? [String: Any])?["summary"] as? [String: Any] }
        for n in 0..<2 {
            let build = try XCTUnwrap(summary(onBuild[n]), "trip \(n): \(onBuild[n])")
            XCTAssertEqual(summary(onPack[n])?["length"] as? Double, try XCTUnwrap(build["length"] as? Double), "trip \(n)")
            XCTAssertEqual(summary(onPack[n])?["time"] as? Double, try XCTUnwrap(build["time"] as? Double), "trip \(n)")
        }
        XCTAssertNil(onPack[2]["trip"], "the pack does not reach the north-east: \(onPack[2])")

        // Exactly the tile bytes Valhalla's own cut holds: valhalla_build_extract selects by bbox
        // (closed boxes), so each region's bbox is cut on its own and the cuts are united; no edge
        // of these boxes lies on a grid line, where the closed and half-open covers would differ.
        var theirs: [String: Data] = [:]
        for city in [Self.west, Self.east] {
            let cut = ws.root.appendingPathComponent("cut-\(city.id).tar")
            try ValhallaFixture.buildExtract(town: town, output: cut, bbox: city.bbox.map { String($0) }.joined(separator: ","))
            theirs.merge(try members(of: cut)) { first, _ in first }
        }
        let ours = try members(of: tar)
        XCTAssertEqual(ours.keys.sorted(), theirs.keys.sorted(), "the same member set")
        for (path, data) in ours { XCTAssertEqual(data, theirs[path], "\(path): the same tile bytes") }
        print("routing pack over HTTP: \(ours.count) tiles (\(ours.keys.sorted().joined(separator: ", "))), "
              + "\(record["bytes"]?.intValue ?? 0) bytes, \(applyRanges.count) range requests, equal to valhalla_build_extract's cut of the two bboxes")
    }

    /// An index entry pointing past the end of the file: the plan fails with 65, naming the URL
    /// and the entry; nothing is asked for but the index.
    func testAnIndexPointingPastTheFileIsAnInvalidJobNamingTheURL() throws {
        var (_, bytes) = try townExtract()
        // The first entry's offset (bytes 512–519 of the tar, little-endian) moved far past the end.
        bytes.replaceSubrange(512..<520, with: withUnsafeBytes(of: UInt64(1 << 40).littleEndian) { Data($0) })
        let damaged = bytes
        serveExtract { _ in (damaged, "\"damaged\"") }
        let job = try writeJob([Self.east], extract: extractURL)
        let planned = try ws.provision("plan", job, environment: epoch)
        planned.expect(65, "a damaged remote index")
        XCTAssertTrue(planned.stderr.contains("routing pack 'drive'") && planned.stderr.contains(extractURL), planned.stderr)
        XCTAssertTrue(planned.stderr.contains("past the file"), planned.stderr)
        let applied = try ws.provision("apply", job, environment: epoch)
        applied.expect(65)
        XCTAssertEqual(Set(ranges()), ["bytes=0-65535"], "only the index was read")
        XCTAssertFalse(FileManager.default.fileExists(atPath: tar.path))

        // Not a tar at all (an HTML page with ranges): named as well.
        serveExtract { _ in (Data(String(repeating: "<html>maintenance</html>", count: 40).utf8), "\"html\"") }
        let html = try ws.provision("plan", job, environment: epoch)
        html.expect(65)
        XCTAssertTrue(html.stderr.contains("not a tar file") && html.stderr.contains(extractURL), html.stderr)
    }

    /// The extract replaced on the server between the index read and the tile reads: the apply
    /// stops with 75, the previous extract and lock as they were; the tile staged from the old
    /// version is dropped, and the next apply (the file stable again) reads both tiles anew.
    func testAnExtractReplacedDuringTheApplyStopsItAndTheStoreStaysConsistent() throws {
        let (_, bytes) = try townExtract()
        serveExtract { _ in (bytes, "\"town-1\"") }
        try ws.provision("apply", "--quiet", try writeJob([Self.east], extract: extractURL, name: "east.json"), environment: epoch)
            .expect(0)
        let before = try Data(contentsOf: tar), recordBefore = try readJSON(ws.lock)["routingPacks"]

        // The west adds two level-2 tiles: the index and one tile come from version 1, the rest from 2.
        serveExtract { number in (bytes, number < 2 ? "\"town-1\"" : "\"town-2\"") }
        let job = try writeJob([Self.west, Self.east], extract: extractURL)
        let failed = try ws.provision("apply", job, environment: epoch)
        failed.expect(75, "the extract changed during the apply")
        XCTAssertTrue(failed.stderr.contains("the tile extract \(extractURL) changed while it was read"), failed.stderr)
        XCTAssertTrue(failed.stderr.contains("ETag \"town-1\" → \"town-2\""), failed.stderr)
        XCTAssertEqual(try Data(contentsOf: tar), before, "the previous extract is kept")
        XCTAssertEqual(try readJSON(ws.lock)["routingPacks"], recordBefore, "and the lock's record of it")
        let staging = ws.store.appendingPathComponent("routing/.drive.partial")
        let staged = try FileManager.default.contentsOfDirectory(atPath: staging.path).filter { $0.hasSuffix(".gph") }
        XCTAssertEqual(staged.count, 1, "the tile read before the change is staged: \(staged)")

        // Stable at version 2: the tile staged from version 1 is not mixed in; both are read anew.
        let asked = ranges().count
        serveExtract { _ in (bytes, "\"town-2\"") }
        try ws.provision("apply", "--quiet", job, environment: epoch).expect(0)
        XCTAssertEqual(ranges(from: asked).count, 3, "the index and the two tiles the west adds: \(ranges(from: asked))")
        XCTAssertFalse(FileManager.default.fileExists(atPath: staging.path))
        XCTAssertEqual(try readJSON(ws.lock)["routingPacks"]?.arrayValue?.first?["tiles"]?.arrayValue?.count, 5)
    }

    /// An extract URL whose prefix the job's origins map: to another HTTP base (read there by
    /// range, with the same requests), or to a directory (read from its file, no request at all).
    func testAnExtractURLTheOriginsMapIsReadFromTheMirror() throws {
        let (_, bytes) = try townExtract()
        serveExtract { _ in (bytes, "\"town-1\"") }
        let canonical = "https://graph.example.com/v3.9/town.tar"
        let mirrored = try writeJob([Self.east], extract: canonical, name: "mirror.json",
                                    origins: [("https://graph.example.com/v3.9/", .string(ws.server.baseURL + "/"))])
        try ws.provision("apply", "--quiet", mirrored, environment: epoch).expect(0)
        XCTAssertEqual(ranges().count, 4, "the index and the east's three tiles, from the mirror: \(ranges())")
        let record = try XCTUnwrap(try readJSON(ws.lock)["routingPacks"]?.arrayValue?.first)
        XCTAssertEqual(record["source"]?.stringValue, "extract:" + canonical, "the lock names the job's URL, not the mirror's")
        let built = try Data(contentsOf: tar)

        try FileManager.default.removeItem(at: ws.store)
        let local = try writeJob([Self.east], extract: canonical, name: "directory.json",
                                 origins: [("https://graph.example.com/v3.9/", .string(ws.root.path))])
        try ws.provision("apply", "--quiet", local, environment: epoch).expect(0)
        XCTAssertEqual(ranges().count, 4, "nothing asked of the server")
        XCTAssertEqual(try Data(contentsOf: tar), built, "the same extract")
    }

    /// Bad input, exit-coded: a template without {tilePath} and an unknown level are an invalid
    /// job (65) with their pointers; an extract URL the server has nothing at is upstream
    /// unavailable (69), named.
    func testBadRoutingInputIsNamedAndExitCoded() throws {
        let invalid = try writeJob([Self.east], extract: "unused", name: "invalid.json",
                                   pack: [("extract", nil), ("tiles", "https://graph.example.com/{z}/{x}/{y}.gph"), ("levels", [0, 5])])
        let validated = try ws.provision("validate", invalid)
        validated.expect(65, "an invalid job")
        XCTAssertTrue(validated.combined.contains("/routingPacks/0/tiles") && validated.combined.contains("expected {tilePath} exactly once"),
                      validated.combined)
        XCTAssertTrue(validated.combined.contains("/routingPacks/0/levels/1") && validated.combined.contains("unknown graph level 5"),
                      validated.combined)

        ws.server.setRoute("/gone.tar", .status(404))
        let gone = try ws.provision("plan", try writeJob([Self.east], extract: ws.server.baseURL + "/gone.tar", name: "gone.json"),
                                    environment: epoch)
        gone.expect(69, "no extract at that URL")
        XCTAssertTrue(gone.stderr.contains("cannot read the tile extract \(ws.server.baseURL)/gone.tar"), gone.stderr)
    }
}
