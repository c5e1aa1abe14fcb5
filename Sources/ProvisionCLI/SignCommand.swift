import Foundation
import ProvisionEngine

/// `provision sign --key KEY.pem`: writes the Ed25519 signature of the store's lock beside it.
struct SignCommand {
    let arguments: SignArguments
    let view: CommandView

    func run() throws(ProvisionError) -> ExitCode {
        let key = try LockSignature.signingKey(path: arguments.key, flag: "--key")
        let result = try SignRun(store: arguments.store, key: key).run()
        view.show { $0.sign(result) }
        return .success
    }
}
