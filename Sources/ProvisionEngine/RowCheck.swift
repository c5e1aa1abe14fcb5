import Foundation
import ProvisionExecution
import ProvisionModel

extension Verifier {
    /// Why a stored row's payload is not usable for its kind, or nil: the executor's checks,
    /// handed to the store's damage search (Store and Execution do not know each other).
    static func rowCheck() -> (ResourceKind, Data) -> String? {
        let verifier = Verifier()
        return { kind, payload in
            if case .failure(let failure) = verifier.verify(payload, kind: kind) { return failure.description }
            return nil
        }
    }
}
