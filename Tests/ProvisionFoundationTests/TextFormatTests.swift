@testable import ProvisionFoundation
import XCTest

/// Counts in human text: the noun agrees with the number, thousands are grouped.
final class TextFormatTests: XCTestCase {
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

    func testByteFormatIsOneUnitStyle() {
        let cases: [(Int64, String)] = [
            (0, "0 B"), (1, "1 B"), (1_023, "1023 B"), (1_024, "1.0 KiB"), (1_536, "1.5 KiB"),
            (345_829, "337.7 KiB"), (1_048_570, "1.0 MiB"), (1_048_576, "1.0 MiB"),
            (5 * 1_073_741_824 + 107_374_182, "5.1 GiB"), (1 << 40, "1.0 TiB"), (3 << 50, "3.0 PiB"), (-5, "-5 B"),
        ]
        for (bytes, text) in cases { XCTAssertEqual(ByteFormat.string(bytes), text, "\(bytes)") }
        XCTAssertEqual(ByteFormat.string(1_536, estimated: true), "~1.5 KiB")
        XCTAssertEqual(ByteFormat.exact(21_585_000), "20.6 MiB (21,585,000 bytes)")
        XCTAssertEqual(ByteFormat.exact(700), "700 B")
    }

    func testRateAndDuration() {
        XCTAssertEqual(TextFormat.rate(15_613.7), "15,613/s")
        XCTAssertEqual(TextFormat.rate(0), "0/s")
        XCTAssertEqual(TextFormat.rate(.infinity), "0/s")
        XCTAssertEqual(TextFormat.duration(seconds: 0), "0s")
        XCTAssertEqual(TextFormat.duration(seconds: 59), "59s")
        XCTAssertEqual(TextFormat.duration(seconds: 125), "2m 5s")
        XCTAssertEqual(TextFormat.duration(seconds: 3_780), "1h 3m")
    }
}
