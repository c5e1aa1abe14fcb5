import Foundation
/// The byte helpers (`randomBytes`, `Data(hex:)`) live in ProvisionTestSupport, shared with the store tests.
@_exported import ProvisionTestSupport

