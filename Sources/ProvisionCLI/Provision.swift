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
            let options = error.options
            let progress = ProgressReporter(console: console, mode: options.progress, environment: environment)
            report(ProvisionError(.usage, error.message), options: options, console: console, progress: progress)
            if options.format != .json && progress.style != .json {
                console.err("Run 'provision \(error.command.map { "\($0) " } ?? "")--help' for usage.\n")
            }
            return ExitCode.usage.rawValue
        }
        let options = invocation.options
        let progress = ProgressReporter(console: console, mode: options.progress, environment: environment)
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
                return try ValidateCommand(arguments: arguments, console: console, progress: progress).run().rawValue
            case .plan(let arguments):
                return try PlanCommand(arguments: arguments, console: console, progress: progress, context: try context()).run().rawValue
            case .apply(let arguments):
                return try ApplyCommand(arguments: arguments, console: console, progress: progress, context: try context()).run().rawValue
            case .audit(let arguments):
                return try AuditCommand(arguments: arguments, console: console, progress: progress, context: try context()).run().rawValue
            case .merge(let arguments):
                return try MergeCommand(arguments: arguments, console: console, progress: progress).run().rawValue
            case .export(let arguments):
                return try ExportCommand(arguments: arguments, console: console, progress: progress).run().rawValue
            case .search(let arguments):
                return try SearchCommand(arguments: arguments, console: console, progress: progress).run().rawValue
            }
        } catch {
            progress.finish()
            report(error, options: options, console: console, progress: progress)
            return error.exitCode.rawValue
        }
    }

    /// Prints an error: a JSON document on stdout with --json, and on stderr an `error` event
    /// with `--progress json`, else text.
    static func report(_ error: ProvisionError, options: CommonOptions, console: Console, progress: ProgressReporter) {
        if options.format == .json { console.out(error.json.serialized(.prettySorted) + "\n") }
        progress.error(error, verbose: options.verbose)
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
        case .merge(let arguments): return arguments.options
        case .export(let arguments): return arguments.options
        case .search(let arguments): return arguments.options
        }
    }
}
