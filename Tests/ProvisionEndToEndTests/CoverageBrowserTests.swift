import Foundation
import ProvisionModel
import XCTest

/// The coverage pictures in a real browser (headless Chromium): the demo job's plan looks as
/// recorded, the standalone SVG draws with its own styles, and no page fetches anything.
final class CoverageBrowserTests: WorkspaceTestCase {
    /// The recorded rendering of `plan Jobs/cities.json --html` against an empty store.
    static let golden = Demo.repositoryRoot.appendingPathComponent("Tests/Fixtures/coverage/cities-plan.png")
    /// The same picture, shown in the README.
    static let readmeImage = Demo.repositoryRoot.appendingPathComponent("docs/images/coverage-cities-plan.png")
    /// Rows above this (the title, which names the store's path) are not compared.
    static let comparedFromRow = 48
    /// The most pixels that may differ (by more than 48 in a channel) between two renderings of
    /// the same page: font hinting and anti-aliasing vary a little between builds.
    static let tolerance = 0.01

    /// A fixed directory, so that the page's title (it names the store) is the same every run.
    private var fixed: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        fixed = FileManager.default.temporaryDirectory.appendingPathComponent("provision-coverage-screenshot")
        try? FileManager.default.removeItem(at: fixed)
        try FileManager.default.createDirectory(at: fixed, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: fixed)
        super.tearDown()
    }

    /// `provision plan Jobs/cities.json --store FIXED/store --html FIXED/NAME`.
    private func demoPlan(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws -> URL {
        let job = Demo.repositoryRoot.appendingPathComponent("Jobs/cities.json").path
        let page = fixed.appendingPathComponent(name)
        let result = try ProvisionProcess.provision(["plan", job, "--store", fixed.appendingPathComponent("store").path,
                                                     "--html", page.path, "--quiet"],
                                                    in: fixed, environment: ["SOURCE_DATE_EPOCH": "1700000000"], file: file, line: line)
        result.expect(0, file: file, line: line)
        return page
    }

    func testTheDemoPlanLooksAsRecorded() throws {
        let chromium = try Chromium.find()
        let page = try demoPlan("cities-plan.html")
        let shot = try XCTUnwrap(try chromium.load(page, screenshot: true, scratch: ws.root).screenshot)
        if ProcessInfo.processInfo.environment["PROVISION_RECORD_GOLDENS"] == "1" {
            for target in [Self.golden, Self.readmeImage] {
                try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
                try? FileManager.default.removeItem(at: target)
                try FileManager.default.copyItem(at: shot, to: target)
            }
            XCTFail("recorded \(Self.golden.lastPathComponent) and \(Self.readmeImage.lastPathComponent); review them and run again")
            return
        }
        let expected = try PNGImage(Data(contentsOf: Self.golden))
        let actual = try PNGImage(Data(contentsOf: shot))
        let difference = try XCTUnwrap(actual.difference(from: expected, fromRow: Self.comparedFromRow),
                                       "the screenshot is \(actual.width)×\(actual.height), the recording \(expected.width)×\(expected.height)")
        XCTAssertLessThanOrEqual(difference.share, Self.tolerance,
                                 "\(Int(difference.share * 100))% of the pixels differ from \(Self.golden.lastPathComponent) "
                                 + "(PROVISION_RECORD_GOLDENS=1 re-records it); screenshot kept at \(shot.path)")
        XCTAssertEqual(try Data(contentsOf: Self.readmeImage), try Data(contentsOf: Self.golden),
                       "the README shows the recorded rendering")

        // The comparison sees a real change: after an apply every cell is present, not to add.
        let apply = try ProvisionProcess.provision(["apply", Demo.repositoryRoot.appendingPathComponent("Jobs/cities.json").path,
                                                    "--store", fixed.appendingPathComponent("store").path, "--quiet"],
                                                   in: fixed, environment: ["SOURCE_DATE_EPOCH": "1700000000"])
        apply.expect(0)
        let applied = try XCTUnwrap(try chromium.load(try demoPlan("applied.html"), screenshot: true, scratch: ws.root).screenshot)
        let changed = try XCTUnwrap(try PNGImage(Data(contentsOf: applied)).difference(from: expected, fromRow: Self.comparedFromRow))
        XCTAssertGreaterThan(changed.share, Self.tolerance, "a plan with nothing to add must not pass for the recording")
    }

    func testTheSVGDrawsWithItsOwnStyles() throws {
        let chromium = try Chromium.find()
        let job = try ws.write(ws.job([Demo.london], tiles: .mbtiles)).path
        try ws.provision("plan", job, "--svg", "z14.svg", "--zoom", "14", "--quiet").expect(0)
        let shot = try XCTUnwrap(try chromium.load(ws.root.appendingPathComponent("z14.svg"), width: 960, height: 900,
                                                   screenshot: true, scratch: ws.root).screenshot)
        let image = try PNGImage(Data(contentsOf: shot))
        // The "to add" fill (#2e9e4f), and no cell left black for want of a matching style rule.
        var green = 0, black = 0
        for p in stride(from: 0, to: image.rgba.count, by: 4) {
            let (r, g, b) = (Int(image.rgba[p]), Int(image.rgba[p + 1]), Int(image.rgba[p + 2]))
            if abs(r - 0x2e) < 12 && abs(g - 0x9e) < 12 && abs(b - 0x4f) < 12 { green += 1 }
            if r + g + b < 30 { black += 1 }
        }
        XCTAssertGreaterThan(green, 2_000, "the London inset's cells are drawn green")
        XCTAssertLessThan(black, 2_000, "black would mean unstyled cells (\(black) pixels)")
    }

    func testNoPageFetchesAnything() throws {
        let chromium = try Chromium.find()
        let job = try ws.write(ws.job([Demo.london, Demo.paris], tiles: .mbtiles)).path
        try ws.provision("plan", job, "--html", "map.html", "--svg", "z12.svg", "--zoom", "12", "--quiet").expect(0)
        try ws.provision("apply", job, "--quiet").expect(0)
        try ws.provision("audit", "--store", ws.store.path, "--html", "audit.html", "--quiet").expect(0)
        for name in ["map.html", "z12.svg", "audit.html"] {
            let load = try chromium.load(ws.root.appendingPathComponent(name), scratch: ws.root)
            XCTAssertEqual(load.pageRequests, [], name)
        }
        // The same check sees a page that does fetch.
        let control = ws.root.appendingPathComponent("control.html")
        try Data("""
            <!DOCTYPE html><html><head><link rel="stylesheet" href="https://example.invalid/a.css"></head>
            <body><img src="http://example.invalid/b.png"><svg><image href="https://example.invalid/c.png"/></svg></body></html>
            """.utf8).write(to: control)
        let load = try chromium.load(control, scratch: ws.root)
        XCTAssertEqual(Set(load.pageRequests), ["https://example.invalid/a.css", "http://example.invalid/b.png",
                                                "https://example.invalid/c.png"])
    }
}
