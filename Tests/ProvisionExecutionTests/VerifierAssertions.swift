import Foundation
import ProvisionModel
import XCTest
@testable import ProvisionExecution

extension XCTestCase {
    /// Fails unless `Verifier()` accepts `data` as `kind`.
    func accepts(_ data: Data, _ kind: ResourceKind, url: String? = nil, file: StaticString = #filePath, line: UInt = #line) {
        if case .failure(let failure) = Verifier().verify(data, kind: kind, url: url) {
            XCTFail("\(kind.name) refused: \(failure)", file: file, line: line)
        }
    }

    /// Fails unless `Verifier()` refuses `data` as `kind` with an invalid body (or, with
    /// `document`, an unusable document) whose message contains `text`.
    func refuses(_ data: Data, _ kind: ResourceKind, containing text: String = "", document: Bool = false, url: String? = nil,
                 file: StaticString = #filePath, line: UInt = #line) {
        switch Verifier().verify(data, kind: kind, url: url) {
        case .success:
            XCTFail("\(kind.name) accepted bad bytes", file: file, line: line)
        case .failure(.invalidBody(let why)) where !document, .failure(.unusableDocument(let why)) where document:
            XCTAssertTrue(text.isEmpty || why.contains(text), "\(why) lacks \(text)", file: file, line: line)
        case .failure(let other):
            XCTFail("expected \(document ? "unusableDocument" : "invalidBody"), got \(other)", file: file, line: line)
        }
    }
}
