import XCTest
@testable import TileMath
final class SmokeTests: XCTestCase { func testNothing() {} }
