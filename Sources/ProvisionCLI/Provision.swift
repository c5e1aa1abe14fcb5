import Foundation
import ProvisionFoundation
import ProvisionEngine
import ProvisionModel

/// The command-line entry point: parses, dispatches, renders, and decides the exit status.
public enum Provision {
    /// Runs the command line `arguments` (without the program name); returns the exit status.
    public static func run(_ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
                           console: Console = Console()) -> Int32 {
        let invocation: Invocation
        do {
            invocation = try ArgumentParser.parse(arguments)
        } catch {
            // The output options the line asked for, so that even a usage error comes out as JSON when asked.
            let view = CommandView(console: console, options: error.options, environment: environment)
            view.usageError(ProvisionError(.usage, error.message), command: error.command)
            return ExitCode.usage.rawValue
        }
        let options = invocation.options
        let view = CommandView(console: console, options: options, environment: environment)
        do {
            // Read only by the commands that need it, so a bad variable never breaks --help.
            func context() throws(ProvisionError) -> RunContext { try RunEnvironment.context(environment) }
            switch invocation {
            case .help(let topic):
                console.out(Help.text(for: topic) + "\n")
                return ExitCode.success.rawValue
            case .version:
                console.out("provision \(Help.version)\n")
                return ExitCode.success.rawValue
            case .validate(let arguments):
                return try ValidateCommand(arguments: arguments, view: view).run().rawValue
            case .plan(let arguments):
                return try PlanCommand(arguments: arguments, view: view, context: try context()).run().rawValue
            case .apply(let arguments):
                return try ApplyCommand(arguments: arguments, view: view, context: try context()).run().rawValue
            case .audit(let arguments):
                return try AuditCommand(arguments: arguments, view: view, context: try context()).run().rawValue
            case .sign(let arguments):
                return try SignCommand(arguments: arguments, view: view).run().rawValue
            case .merge(let arguments):
                return try MergeCommand(arguments: arguments, view: view).run().rawValue
            case .export(let arguments):
                return try ExportCommand(arguments: arguments, view: view).run().rawValue
            case .search(let arguments):
                return try SearchCommand(arguments: arguments, view: view).run().rawValue
            }
        } catch {
            view.progress.finish()
            view.error(error)
            return error.exitCode.rawValue
        }
    }
}

extension Invocation {
    /// The options shared by every command (defaults for help and version).
    var options: CommonOptions {
        switch self {
        case .help, .version: return CommonOptions(progress: .none)
        case .validate(let arguments): return arguments.options
        case .plan(let arguments): return arguments.options
        case .apply(let arguments): return arguments.options
        case .audit(let arguments): return arguments.options
        case .sign(let arguments): return arguments.options
        case .merge(let arguments): return arguments.options
        case .export(let arguments): return arguments.options
        case .search(let arguments): return arguments.options
        }
    }
}
