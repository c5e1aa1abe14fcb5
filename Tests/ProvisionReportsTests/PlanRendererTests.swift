import Foundation
import ProvisionModel
import ProvisionReports
import XCTest

/// The text and Markdown views of a plan, and human byte sizes.
final class PlanRendererTests: XCTestCase {
    // The whole text and Markdown views are pinned by golden files (GoldenRenderingTests).

    func testNotesAreShownInTheTextTheMarkdownAndTheJSON() throws {
        var plan = Samples.plan()
        plan.notes = [PlanNote(subject: "stylePack 'streets'", message: "source 'attribution' has neither url nor tiles: skipped"),
                      PlanNote(subject: "region 'paris'", message: "landcover fetched at z6")]
        let doc = PlanDocument(plan: plan, store: "./store", limits: Limits())
        let text = PlanRenderer.text(doc)
        XCTAssertTrue(text.contains("\nnote: stylePack 'streets': source 'attribution' has neither url nor tiles: skipped\n"
                                    + "note: region 'paris': landcover fetched at z6\n"), text)
        let markdown = PlanRenderer.markdown(doc)
        XCTAssertTrue(markdown.contains("<summary>2 notes</summary>"), markdown)
        XCTAssertTrue(markdown.contains("- **region 'paris'**: landcover fetched at z6\n"), markdown)
        XCTAssertEqual(doc.json["notes"]?[1]?["message"], "landcover fetched at z6")
        XCTAssertFalse(PlanRenderer.text(Samples.planDocument()).contains("note:"))
    }

    func testTextSaysNoChangesAndMarksEstimates() {
        let text = PlanRenderer.text(Samples.planDocument(changes: false))
        XCTAssertTrue(text.contains("\n  region berlin (Berlin): no changes\n"), text)
        XCTAssertFalse(text.contains("\n+ ") || text.contains("\n- ") || text.contains("\n~ "), text)
        XCTAssertTrue(text.contains("\nPlan: 0 tiles to add, 0 to remove, 8 to keep; 0 resource links to add, 0 to remove.\n"), text)
        XCTAssertTrue(text.hasSuffix("Downloads: 0 tiles (~0 B, estimated). No changes: the store matches the job.\n"), text)
    }

    func testZoomsArePaddedToTwoColumns() {
        var plan = Samples.plan(changes: false)
        plan.regions[0].zoomChanges = [ZoomChange(urlTemplate: Samples.template, zoom: 3, counts: ChangeCounts(keep: 1)),
                                       ZoomChange(urlTemplate: Samples.template, zoom: 14, counts: ChangeCounts(keep: 1))]
        let text = PlanRenderer.text(PlanDocument(plan: plan, store: "s", limits: Limits()))
        XCTAssertTrue(text.contains("\n      z 3 +0 -0 =1\n      z14 +0 -0 =1\n"), text)
    }

    func testMarkdownWithoutChangesOrLimits() {
        let markdown = PlanRenderer.markdown(Samples.planDocument(changes: false, limits: Limits()))
        XCTAssertTrue(markdown.contains("| | **total** | | **0** | **0** | **8** | **0 B** |\n\nNo changes.\n\n#### Bytes in offline.db"), markdown)
        XCTAssertFalse(markdown.contains("Limits"))
    }

    /// A pack whose overview is empty (a saved plan, a style with nothing) shows no source lines.
    func testPacksWithoutAnOverviewShowNoSourceLines() {
        var plan = Samples.plan()
        plan.stylePacks[0].overview = StyleOverview()
        let doc = PlanDocument(plan: plan, store: "s", limits: Limits())
        XCTAssertFalse(PlanRenderer.text(doc).contains("    source "))
        XCTAssertFalse(PlanRenderer.text(doc).contains("fonts:"))
        XCTAssertFalse(PlanRenderer.markdown(doc).contains("<details>"))
    }

    func testZoomsAndFontsTexts() {
        XCTAssertEqual(PlanRenderer.zoomsText([]), "")
        XCTAssertEqual(PlanRenderer.zoomsText([RegionZooms(region: "a", zooms: 5...5), RegionZooms(region: "b", zooms: 5...5)]), "z5")
        XCTAssertEqual(PlanRenderer.zoomsText([RegionZooms(region: "a", zooms: nil)]), "no zooms")
        XCTAssertEqual(PlanRenderer.zoomsText([RegionZooms(region: "a", zooms: 1...16), RegionZooms(region: "b", zooms: 9...16)]),
                       "a z1-16, b z9-16")
        XCTAssertEqual(PlanRenderer.fontsText(StyleOverview()), "none (the style has no glyphs template)")
        XCTAssertEqual(PlanRenderer.fontsText(StyleOverview(glyphsTemplate: "https://f/{fontstack}/{range}")),
                       "none (no symbol layer draws text)")
        XCTAssertEqual(PlanRenderer.fontsText(StyleOverview(fontStacks: [["A", "B"], ["C"]], glyphRangesPerStack: 256,
                                                            glyphsTemplate: "https://f/{fontstack}/{range}")),
                       "2 stacks × 256 glyph ranges: A, B; C")
    }

    func testMarkdownEscapesPipesInCells() {
        var plan = Samples.plan()
        plan.stylePacks[0].overview.sources = [StyleSourceSummary(name: "a|b", type: "vector", fetch: .skipped("x | y"))]
        let markdown = PlanRenderer.markdown(PlanDocument(plan: plan, store: "s", limits: Limits()))
        XCTAssertTrue(markdown.contains("| a\\|b | vector | skipped: x \\| y |  |\n"), markdown)
    }
}
