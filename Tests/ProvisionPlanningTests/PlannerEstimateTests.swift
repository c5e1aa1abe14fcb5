import Foundation
import ProvisionFoundation
import ProvisionModel
import ProvisionPlanning
import TileMath
import XCTest

/// Issue 20 #7: byte estimates come from measurements where there are any (the store, an
/// origin archive), else a documented size per format; refusals name the basis; a region
/// that gets no tiles is a note.
final class PlannerEstimateTests: XCTestCase {
    private typealias P = PlannerTests

    private func refusal(_ input: PlanInput) -> String? {
        do {
            _ = try Planner.plan(input, store: nil)
            return nil
        } catch PlanError.limitExceeded(let message) {
            return message
        } catch {
            return "\(error)"
        }
    }

    func testMaxBytesRefusalNamesTheAssumedSizeAndGroupsItsNumbers() throws {
        let region = P.region("berlin", zooms: 0...10)
        let count = TileCover.count(.bbox(P.berlin), zooms: 0...10)
        let message = try XCTUnwrap(refusal(P.input([region], limits: Limits(maxBytes: 100_000))))
        XCTAssertTrue(message.contains("estimated from an assumed 15,000 bytes per vector tile (docs/job-file.md"), message)
        XCTAssertTrue(message.contains("(\(grouped(count * 15_000)) bytes)"), message)
        XCTAssertTrue(message.contains("over limits.maxBytes = 97.7 KiB (100,000 bytes)"), message)
        XCTAssertNil(message.range(of: #"\d{5,}"#, options: .regularExpression), "ungrouped number: \(message)")
        // The plan itself names the assumption in a note; a measured estimate needs none.
        let plan = try Planner.plan(P.input([region]), store: nil)
        XCTAssertEqual(plan.notes.filter { $0.subject == "byte estimate" }.map(\.message),
                       ["tiles nothing measured (no stored tile of their template and zoom, no MBTiles origin) are estimated "
                        + "at an assumed 15,000 bytes per vector tile (docs/job-file.md, \"Byte estimates\")"])
    }

    func testRasterAndTerrainTilesAreEstimatedAtTheirOwnSizes() throws {
        let raster = TileSource(template: "https://r.example.com/{z}/{x}/{y}.png", maxZoom: 14, tileSize: 256, type: .raster)
        let dem = TileSource(template: "https://dem.example.com/{z}/{x}/{y}.png", maxZoom: 14, type: .rasterDEM)
        for (source, bytes) in [(raster, Planner.assumedRasterTileBytes), (dem, Planner.assumedTerrainTileBytes)] {
            let plan = try Planner.plan(P.input([P.region("berlin", zooms: 0...6)], pack: P.resolvedPack(sources: [source])), store: nil)
            XCTAssertGreaterThan(plan.tilesToDownload, 0)
            XCTAssertEqual(plan.bytesToDownload, Int64(plan.tilesToDownload * bytes), "\(source.type)")
            let message = try XCTUnwrap(refusal(P.input([P.region("berlin", zooms: 0...6)], limits: Limits(maxBytes: 1),
                                                         pack: P.resolvedPack(sources: [source]))))
            XCTAssertTrue(message.contains("estimated from an assumed \(grouped(bytes)) bytes per \(source.type.rawValue) tile"), message)
        }
    }

    func testAnOriginArchiveMeasurementReplacesTheAssumption() throws {
        let region = P.region("berlin", zooms: 0...6)
        var input = P.input([region], limits: Limits(maxBytes: 1_000))
        input.originTileSizes = [P.template: OriginTileSizes(origin: "streets.mbtiles",
                                                             sizes: Dictionary(uniqueKeysWithValues: (0...14).map { ($0, 234.0) }))]
        let message = try XCTUnwrap(refusal(input))
        XCTAssertTrue(message.contains("estimated from the mean tile size per zoom of the origin archive streets.mbtiles;"), message)
        input.job.limits = Limits()
        let plan = try Planner.plan(input, store: nil)
        XCTAssertEqual(plan.bytesToDownload, Int64(plan.tilesToDownload * 234))
        XCTAssertFalse(plan.notes.contains { $0.subject == "byte estimate" }, "\(plan.notes)")
    }

    func testGlyphRangesAreEstimatedByWhatFontsFill() throws {
        let base = "https://fonts.example.com/Noto%20Sans/"
        let ranges = [0, 256, 0x0E00, 0x3000, 0x4E00, 0xAC00, 0xFF00]
        var pack = P.resolvedPack()
        pack.resources += ranges.map { ResourceRef(url: base + "\($0)-\($0 + 255).pbf", kind: .glyphs) }
        let plan = try Planner.plan(P.input([P.region("berlin", zooms: 0...2)], pack: pack), store: nil)
        let footprint = try XCTUnwrap(plan.sharing)
        let glyphBytes = footprint.total.estimatedBytes
        let filled = Int64(Planner.defaultResourceBytes[.glyphs] ?? 0)
        let expectedGlyphs = 5 * filled + 2 * Int64(Planner.sparseGlyphRangeBytes)
        let others = Int64((Planner.defaultResourceBytes[.style] ?? 0) + (Planner.defaultResourceBytes[.source] ?? 0)
                           + (Planner.defaultResourceBytes[.spriteImage] ?? 0))
        XCTAssertEqual(glyphBytes - plan.bytesToDownload, expectedGlyphs + others)
    }

    func testARegionWhoseZoomsGetNoTilesIsANote() throws {
        var pack = P.resolvedPack(sources: [TileSource(template: P.template, minZoom: 0, maxZoom: 14)])
        pack.pack.overzoom = false
        let plan = try Planner.plan(P.input([P.region("high", zooms: 16...17), P.region("low", zooms: 0...2)], pack: pack), store: nil)
        let notes = plan.notes.filter { $0.message.hasPrefix("gets no tiles") }
        XCTAssertEqual(notes.map(\.subject), ["region 'high' with style pack 'demo'"], "\(plan.notes)")
        XCTAssertTrue(notes.first?.message.contains("has tiles at z0–14, none at the region's z16–17 (\"overzoom\": false)") == true,
                      "\(notes)")
    }

    func testARegionOutsideTheBoundsIsANote() throws {
        let bounded = TileSource(template: P.template, maxZoom: 14, bounds: TileBounds(west: 0, south: 0, east: 10, north: 10))
        let plan = try Planner.plan(P.input([P.region("berlin", zooms: 6...8)], pack: P.resolvedPack(sources: [bounded])), store: nil)
        XCTAssertEqual(plan.tilesToDownload, 0)
        let note = plan.notes.first { $0.message.hasPrefix("gets no tiles") }
        XCTAssertEqual(note?.subject, "region 'berlin' with style pack 'demo'")
        XCTAssertTrue(note?.message.contains("the region lies outside the bounds of ") == true
                      && note?.message.contains("([0.0, 0.0, 10.0, 10.0])") == true, "\(String(describing: note))")
    }
}
