import Foundation
import ProvisionModel
import ProvisionReports
import XCTest

/// Issue 20 #7: the apply summary says how many of an incomplete region's tiles are stored
/// ("0 of 83 tiles", not "83 tiles (incomplete)"), and names its byte figures.
final class ApplyReportTextTests: XCTestCase {
    private func report(expected: Int, footprint: Footprint?) -> String {
        var lock = Samples.lock()
        guard let index = lock.regions.firstIndex(where: { $0.key == "paris/streets" }) else { return "" }
        lock.regions[index].expectedTiles = [TileCount(urlTemplate: Samples.template, zoom: 14, count: expected)]
        lock.regions[index].isComplete = false
        return ApplyReport(plan: Samples.planDocument(), outcome: Samples.partialOutcome(), planSeconds: 0.25, lock: lock,
                           footprint: footprint).text
    }

    func testAnIncompleteRegionSaysHowManyOfItsTilesAreStored() throws {
        let footprint = Samples.storeFootprint()
        let stored = try XCTUnwrap(footprint.regions.flatMap(\.rows).first { $0.key == "paris/streets" }).entry.total.tiles
        let text = report(expected: 83, footprint: footprint)
        XCTAssertTrue(text.contains("  ✗ paris/streets: \(stored) of 83 tiles stored (incomplete)\n"), text)
        XCTAssertTrue(report(expected: 83, footprint: nil).contains("  ✗ paris/streets: 83 tiles expected (incomplete)\n"))
        XCTAssertTrue(text.contains("downloaded and verified (uncompressed)"), "the downloaded size is labelled: \(text)")
    }
}
