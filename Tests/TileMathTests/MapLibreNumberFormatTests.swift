@testable import TileMath
import XCTest

final class MapLibreNumberFormatTests: XCTestCase {
    func testKnownOutputs() {
        let halfWorld = 2 * Double.pi * 6378137.0 / 2
        let cases: [(Double, String)] = [
            (-halfWorld, "-20037508.342789245"), // Grisu2 without final rounding, as MapLibre writes it
            (halfWorld, "20037508.342789245"),
            (0, "0"), (-0.0, "-0"), (512, "512"), (0.1, "0.1"), (123.456, "123.456"),
            (1e21, "1e21"), (1.5e22, "1.5e22"), (1e20, "100000000000000000000"),
            (0.000001, "0.000001"), (1.5e-7, "1.5e-7"), (-2.5, "-2.5"),
        ]
        for (value, text) in cases {
            XCTAssertEqual(MapLibreNumberFormat.string(value), text, "\(value)")
        }
    }

    func testEveryOutputRoundTrips() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let value = Double(bitPattern: UInt64.random(in: 1..<0x7FF0_0000_0000_0000, using: &generator))
            let text = MapLibreNumberFormat.string(value)
            XCTAssertEqual(Double(text), value, text)
            XCTAssertEqual(Double(MapLibreNumberFormat.string(-value)), -value)
        }
    }
}
