import Foundation
import ProvisionFoundation
import ProvisionModel
import XCTest

/// The glyphs fixture (Tests/Fixtures/glyphs, written by its make_fixture.py).
enum GlyphsFixture {
    static let fixtures = Demo.repositoryRoot.appendingPathComponent("Tests/Fixtures/glyphs")
    static let host = "https://glyphs.example.com/"

    /// expected.json's ranges for `zooms`, in the form of `Workspace.storedGlyphRanges`.
    static func expectedRanges(_ zooms: String) throws -> Set<String> {
        let expected = try readJSON(fixtures.appendingPathComponent("expected.json"))
        var out = Set<String>()
        for (region, stacks) in try XCTUnwrap(expected[zooms]?.objectValue).members {
            for (font, starts) in try XCTUnwrap(stacks.objectValue).members {
                for start in starts.arrayValue ?? [] { out.insert("\(region) \(font) \(start.intValue ?? -1)") }
            }
        }
        return out
    }
}

extension Workspace {
    /// Writes the light glyph PBFs with the fixture script and a job over the four regions.
    @discardableResult
    func makeGlyphsJob(glyphs: String, zoom: [Int] = [10, 12], name: String = "job.json", store: String = "store") throws -> URL {
        let fonts = root.appendingPathComponent("fonts")
        if !FileManager.default.fileExists(atPath: fonts.path) {
            let python = try XCTUnwrap(ProvisionProcess.onPath("python3"), "python3 is missing")
            let result = try ProvisionProcess.run(python, [GlyphsFixture.fixtures.appendingPathComponent("make_fixture.py").path,
                                                           "--fonts", fonts.path, "--light"],
                                                  in: root, environment: ProcessInfo.processInfo.environment, timeout: 120)
            result.expect(0, "make_fixture.py --fonts")
        }
        let regions = try readJSON(GlyphsFixture.fixtures.appendingPathComponent("regions.json"))
        let job: JSONValue = [
            "version": 1, "name": "glyphs", "store": .string(store),
            "stylePacks": [["id": "labels", "style": .string(GlyphsFixture.host + "style.json"), "glyphs": .string(glyphs)]],
            "regions": .array(try XCTUnwrap(regions.objectValue).members.map { id, bbox in
                ["id": .string(id), "name": .string(id), "bbox": bbox, "zoom": .array(zoom.map { .int($0) }),
                 "stylePacks": ["labels"], "metadata": ["name": .string(id)]]
            }),
            "origins": [
                GlyphsFixture.host + "tiles/": .string("mbtiles:" + GlyphsFixture.fixtures.appendingPathComponent("labels.mbtiles").path),
                GlyphsFixture.host + "fonts/": .string(fonts.path),
                GlyphsFixture.host: .string(GlyphsFixture.fixtures.path),
            ],
        ]
        return try write(job, to: name)
    }

    /// The glyph range URLs linked to each region row, as (region, font, range start).
    func storedGlyphRanges() throws -> Set<String> {
        let rows = try sqlite.rows("""
            SELECT json_extract(g.description, '$.name'), r.url FROM regions g
            JOIN region_resources rr ON rr.region_id = g.id JOIN resources r ON r.id = rr.resource_id WHERE r.kind = 4
            """)
        return Set(rows.map { row in
            let url = row[1].dropFirst((GlyphsFixture.host + "fonts/").count)
            let parts = url.split(separator: "/")
            let font = parts[0].removingPercentEncoding ?? ""
            let start = parts[1].split(separator: "-")[0]
            return "\(row[0]) \(font) \(start)"
        })
    }
}
