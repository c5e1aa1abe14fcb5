import XCTest
@testable import ProvisionModel

/// Counts in human text: the noun agrees with the number, thousands are grouped.
final class PluralTests: XCTestCase {
    func testPlural() {
        let cases: [(Int, String, String?, String)] = [
            (0, "tile", nil, "0 tiles"), (1, "tile", nil, "1 tile"), (2, "tile", nil, "2 tiles"),
            (1, "style pack", nil, "1 style pack"), (3, "style pack", nil, "3 style packs"),
            (1, "retry", "retries", "1 retry"), (4, "retry", "retries", "4 retries"),
            (1_573, "download", nil, "1,573 downloads"), (-1, "tile", nil, "-1 tiles"),
        ]
        for (n, singular, pluralForm, expected) in cases {
            XCTAssertEqual(plural(n, singular, pluralForm), expected)
        }
    }

    func testGrouped() {
        let cases: [(Int, String)] = [
            (0, "0"), (7, "7"), (999, "999"), (1_000, "1,000"), (12_345, "12,345"), (1_234_567, "1,234,567"),
            (-1_234, "-1,234"), (Int.max, "9,223,372,036,854,775,807"), (Int.min, "-9,223,372,036,854,775,808"),
        ]
        for (n, text) in cases { XCTAssertEqual(grouped(n), text) }
    }

    func testListed() {
        XCTAssertEqual(listed([]), "")
        XCTAssertEqual(listed(["a"]), "a")
        XCTAssertEqual(listed(["a", "", "b"]), "a and b")
        XCTAssertEqual(listed(["a", "b", "c"]), "a, b and c")
        XCTAssertEqual(listedCounts([(0, "tile"), (1, "resource")]).text, "1 resource")
        XCTAssertTrue(listedCounts([(0, "tile"), (1, "resource")]).isSingular)
        XCTAssertEqual(listedCounts([(2, "tile"), (1, "resource")]).text, "2 tiles and 1 resource")
        XCTAssertFalse(listedCounts([(1, "tile"), (1, "resource")]).isSingular)
        XCTAssertEqual(listedCounts([(0, "tile")]).text, "")
    }
}
