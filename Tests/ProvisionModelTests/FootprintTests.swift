import Foundation
import XCTest
@testable import ProvisionModel

/// The footprint's definitions (marginal, shared, shared with, rows, style packs), checked against
/// a brute-force count over individual items and on named cases.
final class FootprintTests: XCTestCase {
    /// One tile or resource: the rows linking it, its kind and its stored bytes.
    private struct Item {
        var rows: Set<Int64>
        var kind: ResourceKind
        var bytes: Int64
        var estimated: Bool
    }

    /// Rows 1–6: london has two style packs, paris one, berlin a tilesets-only row, rome another pack.
    private let members: [Int64: Footprint.Member] = [
        1: .init(region: "london", stylePack: "streets", key: "london/streets", rowID: 1),
        2: .init(region: "london", stylePack: "satellite", key: "london/satellite", rowID: 2),
        3: .init(region: "paris", stylePack: "streets", key: "paris/streets", rowID: 3),
        4: .init(region: "berlin", stylePack: nil, key: "berlin/-", rowID: 4),
        5: .init(region: "rome", stylePack: "satellite", key: "rome/satellite", rowID: 5),
        6: .init(region: "oslo", stylePack: "streets", key: "oslo/streets", rowID: nil),
    ]

    private func sharing(_ items: [Item]) -> ContentSharing {
        var sharing = ContentSharing()
        for item in items {
            sharing.add(Array(item.rows).shuffled(), kind: item.kind, bytes: item.bytes, estimated: item.estimated)
        }
        return sharing
    }

    private func amount(_ items: [Item]) -> ContentAmount {
        items.reduce(ContentAmount()) { sum, item in
            sum + ContentAmount(tiles: item.kind == .tile ? 1 : 0, resources: item.kind == .tile ? 0 : 1, bytes: item.bytes,
                                estimatedBytes: item.estimated ? item.bytes : 0)
        }
    }

    func testRandomStoresAgreeWithCountingEachItem() {
        var generator = SystemRandomNumberGenerator()
        let kinds: [ResourceKind] = [.tile, .tile, .tile, .style, .source, .glyphs, .spriteImage, .spriteJSON, .image]
        for _ in 0..<100 {
            let items = (0..<Int.random(in: 1...60, using: &generator)).map { _ in
                Item(rows: Set((0..<Int.random(in: 1...3, using: &generator)).map { _ in Int64.random(in: 1...6, using: &generator) }),
                     kind: kinds.randomElement(using: &generator) ?? .tile, bytes: Int64.random(in: 0...5_000, using: &generator),
                     estimated: Bool.random(using: &generator))
            }
            let footprint = Footprint(sharing: sharing(items), members: members)
            let regionOf = members.mapValues(\.region)
            func regions(_ item: Item) -> Set<String> { Set(item.rows.compactMap { regionOf[$0] }) }

            XCTAssertEqual(footprint.regions.map(\.id), ["london", "paris", "berlin", "rome", "oslo"], "regions in row order")
            for region in footprint.regions {
                let mine = items.filter { regions($0).contains(region.id) }
                XCTAssertEqual(region.entry.total, amount(mine), region.id)
                XCTAssertEqual(region.entry.marginal, amount(mine.filter { regions($0) == [region.id] }), region.id)
                let others = Set(mine.flatMap { regions($0) }).subtracting([region.id])
                XCTAssertEqual(Set(region.entry.sharedWith.map(\.name)), others, region.id)
                for share in region.entry.sharedWith {
                    XCTAssertEqual(share.amount, amount(mine.filter { regions($0).contains(share.name) }), "\(region.id) with \(share.name)")
                }
                let bytes = region.entry.sharedWith.map(\.amount.bytes)
                XCTAssertEqual(bytes, bytes.sorted(by: >), "largest first")
                for row in region.rows {
                    guard let id = row.rowID ?? (row.key == "oslo/streets" ? 6 : nil) else { return XCTFail("row \(row.key)") }
                    let linked = items.filter { $0.rows.contains(id) }
                    XCTAssertEqual(row.entry.total, amount(linked), row.key)
                    XCTAssertEqual(row.entry.marginal, amount(linked.filter { $0.rows == [id] }), row.key)
                    for share in row.entry.sharedWith {
                        let other = members.first { $0.value.key == share.name }?.key ?? 0
                        XCTAssertEqual(share.amount, amount(linked.filter { $0.rows.contains(other) }), "\(row.key) with \(share.name)")
                    }
                }
            }
            XCTAssertEqual(footprint.regions.first { $0.id == "london" }?.rows.map(\.key), ["london/streets", "london/satellite"])

            XCTAssertEqual(footprint.all.total, amount(items))
            XCTAssertEqual(footprint.all.shared, amount(items.filter { regions($0).count > 1 }))
            XCTAssertEqual(footprint.regions.reduce(ContentAmount()) { $0 + $1.entry.marginal }, footprint.all.marginal,
                           "the regions' marginal bytes add up to everything not shared")
            XCTAssertEqual(footprint.isExact, !items.contains { $0.estimated && $0.bytes > 0 })

            let packOf = members.mapValues { $0.stylePack ?? "" }
            for pack in footprint.stylePacks {
                let resources = items.filter { $0.kind != .tile && $0.rows.contains { packOf[$0] == pack.id } }
                XCTAssertEqual(pack.entry.total, amount(resources), pack.id)
                XCTAssertEqual(pack.entry.marginal, amount(resources.filter { $0.rows.allSatisfy { packOf[$0] == pack.id } }), pack.id)
                for (group, sum) in pack.kinds {
                    XCTAssertEqual(sum, amount(resources.filter { Footprint.ResourceGroup($0.kind) == group }), "\(pack.id) \(group)")
                }
                XCTAssertEqual(pack.kinds.reduce(ContentAmount()) { $0 + $1.amount }, pack.entry.total)
            }
        }
    }

    func testANamedStore() {
        let items = [
            Item(rows: [1], kind: .tile, bytes: 100, estimated: false),
            Item(rows: [1, 3], kind: .tile, bytes: 40, estimated: false),
            Item(rows: [1, 3, 4], kind: .tile, bytes: 7, estimated: false),
            Item(rows: [1, 2], kind: .tile, bytes: 30, estimated: false),
            Item(rows: [1, 3], kind: .glyphs, bytes: 500, estimated: true),
            Item(rows: [2], kind: .spriteImage, bytes: 60, estimated: false),
        ]
        let footprint = Footprint(sharing: sharing(items), members: members)
        let london = footprint.regions[0]
        XCTAssertEqual(london.id, "london")
        XCTAssertEqual(london.entry.marginal, ContentAmount(tiles: 2, resources: 1, bytes: 190))
        XCTAssertEqual(london.entry.shared, ContentAmount(tiles: 2, resources: 1, bytes: 547, estimatedBytes: 500))
        XCTAssertEqual(london.entry.sharedWith.map(\.name), ["paris", "berlin"])
        XCTAssertEqual(london.entry.sharedWith.map(\.amount.bytes), [547, 7])
        // The tile both london rows hold is london's alone, but neither row's.
        XCTAssertEqual(london.rows[0].entry.marginal.bytes, 100)
        XCTAssertEqual(london.rows[0].entry.sharedWith.map(\.name), ["paris/streets", "london/satellite", "berlin/-"])
        XCTAssertEqual(london.rows[1].entry.marginal.bytes, 60)
        XCTAssertFalse(footprint.isExact)
        XCTAssertEqual(footprint.stylePacks.map(\.id), ["streets", "satellite"])
        XCTAssertEqual(footprint.stylePacks[0].kinds.first { $0.kind == .glyphs }?.amount.bytes, 500)
        XCTAssertEqual(footprint.stylePacks[1].entry.marginal.bytes, 60)
        // Rows without content still have their line; oslo is the plan's new row.
        XCTAssertEqual(footprint.regions.map(\.id), ["london", "paris", "berlin", "rome", "oslo"])
        XCTAssertEqual(footprint.regions.last?.entry.total, ContentAmount())
        XCTAssertNil(footprint.regions.last?.rows.first?.rowID)
    }

    func testRowsNoOneNamesAreRegionsOfTheirOwn() {
        var sharing = ContentSharing()
        sharing.add([9, 1], kind: .tile, bytes: 10)
        let footprint = Footprint(sharing: sharing, members: [1: members[1]!])
        XCTAssertEqual(footprint.regions.map(\.id), ["london", "row 9"])
        XCTAssertEqual(footprint.regions[1].rows.map(\.key), ["row 9"])
        XCTAssertEqual(footprint.regions[1].rows.first?.rowID, 9)
        XCTAssertEqual(footprint.regions[1].entry.sharedWith.map(\.name), ["london"])
    }

    func testSharingSumsByMemberSetWhateverTheOrder() {
        var sharing = ContentSharing()
        sharing.add([3, 1, 3], kind: .tile, bytes: 10)
        sharing.add([1, 3], kind: .tile, bytes: 5, estimated: true)
        sharing.add([1, 3], kind: .glyphs, count: 2, bytes: 8)
        sharing.add([], kind: .tile, bytes: 99)
        XCTAssertEqual(sharing.amounts.count, 2)
        XCTAssertEqual(sharing.amounts[.init(members: [1, 3], kind: .tile)], ContentAmount(tiles: 2, bytes: 15, estimatedBytes: 5))
        XCTAssertEqual(sharing.amounts[.init(members: [1, 3], kind: .glyphs)], ContentAmount(resources: 2, bytes: 8))
        XCTAssertEqual(sharing.total, ContentAmount(tiles: 2, resources: 2, bytes: 23, estimatedBytes: 5))
        XCTAssertEqual(sharing.sortedKeys.map(\.kind), [.tile, .glyphs])
    }
}
