import PlaceIndex
import ProvisionModel
import XCTest

/// The job file's kinds (`SearchPack.kinds`, in the model, which cannot import the index) are the index's.
final class SearchPackKindsTests: XCTestCase {
    func testJobFileKindsAreThePlaceKinds() {
        XCTAssertEqual(SearchPack.kinds, PlaceKind.allCases.map(\.rawValue))
        XCTAssertEqual(SearchPack.defaultNames, PlaceIndexOptions.defaultNameFields)
    }
}
