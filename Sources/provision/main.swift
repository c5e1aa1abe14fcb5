import Foundation
import ProvisionCLI

exit(Provision.run(Array(CommandLine.arguments.dropFirst())))
