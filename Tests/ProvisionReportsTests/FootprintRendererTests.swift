import Foundation
import ProvisionModel
import ProvisionReports
import XCTest

/// The footprint table: a line per region, its rows when it has several style packs, the
/// regions together, the style packs; `~` on what is estimated.
final class FootprintRendererTests: XCTestCase {
    private func member(_ region: String, _ pack: String?, _ row: Int64?) -> Footprint.Member {
        Footprint.Member(region: region, stylePack: pack, key: "\(region)/\(pack ?? "-")", rowID: row)
    }

    func testRegionsWithSeveralStylePacksListTheirRows() {
        var sharing = ContentSharing()
        sharing.add([0], kind: .tile, count: 3, bytes: 3_072)
        sharing.add([0, 1], kind: .tile, bytes: 1_024)
        sharing.add([1], kind: .glyphs, bytes: 2_048)
        sharing.add([2], kind: .tile, bytes: 512, estimated: true)
        let footprint = Footprint(sharing: sharing, members: [0: member("paris", "streets", 1), 1: member("paris", "satellite", 2),
                                                              2: member("rome", "streets", nil)])
        XCTAssertEqual(FootprintRenderer.text(footprint, title: "Bytes"), """
            Bytes (as stored, compressed where the row is; marginal: what removing it frees; ~: partly estimated, still to download):
                                    marginal   shared     total  shared with / made of
              region paris           6.0 KiB      0 B   6.0 KiB
                paris/streets        3.0 KiB  1.0 KiB   4.0 KiB  paris/satellite 1.0 KiB
                paris/satellite      2.0 KiB  1.0 KiB   3.0 KiB  paris/streets 1.0 KiB
              region rome             ~512 B      0 B    ~512 B
              all regions           ~6.5 KiB      0 B  ~6.5 KiB
              style pack streets         0 B      0 B       0 B
              style pack satellite   2.0 KiB      0 B   2.0 KiB  glyphs 2.0 KiB

            """)
        let markdown = FootprintRenderer.markdown(footprint, title: "Bytes")
        XCTAssertTrue(markdown.contains("| region `paris` | 6.0 KiB | 0 B | 6.0 KiB |  |\n|   `paris/streets` | 3.0 KiB |"), markdown)
        XCTAssertTrue(markdown.contains("| all regions | ~6.5 KiB | 0 B | ~6.5 KiB |  |\n"), markdown)
    }

    func testSharesBeyondFiveAreCountedAndPipesEscaped() {
        var sharing = ContentSharing()
        var members: [Int64: Footprint.Member] = [0: member("a|b", "p", 0)]
        for i in 1...7 {
            sharing.add([0, Int64(i)], kind: .tile, bytes: Int64(100 * i))
            members[Int64(i)] = member("r\(i)", "p", Int64(i))
        }
        let footprint = Footprint(sharing: sharing, members: members)
        let text = FootprintRenderer.text(footprint, title: "Bytes")
        XCTAssertTrue(text.contains("  region a|b         0 B  2.7 KiB  2.7 KiB  r7 700 B, r6 600 B, r5 500 B, r4 400 B, r3 300 B, and 2 more\n"),
                      text)
        XCTAssertTrue(FootprintRenderer.markdown(footprint, title: "Bytes").contains("| region `a\\|b` |"))
        XCTAssertEqual(FootprintRenderer.text(Footprint(sharing: ContentSharing(), members: [:]), title: "Bytes"), "",
                       "a store without regions has no table")
    }
}
