import Foundation
import ProvisionModel

/// The command-line entry point: parses, dispatches, renders, and decides the exit status.
public enum Provision {
    /// Runs the command line `arguments` (without the program name); returns the exit status.
    public static func run(_ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment) -> Int32 {
        let console = Console()
        // Choose the output view first, so that even a usage error comes out as JSON when asked.
        let wantsJSON = arguments.contains("--json") || arguments.contains("--format=json")
            || zip(arguments, arguments.dropFirst()).contains { $0 == "--format" && $1 == "json" }
        let verbose = arguments.contains("--verbose")
        let invocation: Invocation
        do {
            invocation = try ArgumentParser.parse(arguments)
        } catch {
            report(CLIError(.usage, error.message), console: console, json: wantsJSON, verbose: false)
            if !wantsJSON {
                console.err("Run 'provision \(error.command.map { "\($0) " } ?? "")--help' for usage.\n")
            }
            return ExitCode.usage.rawValue
        }
        do {
            switch invocation {
            case .help(let topic):
                console.out(Help.text(for: topic) + "\n")
                return ExitCode.success.rawValue
            case .version:
                console.out("provision \(Help.version)\n")
                return ExitCode.success.rawValue
            case .validate(let jobs, let options):
                return try ValidateCommand(jobs: jobs, options: options, console: console).run().rawValue
            case .plan(let job, let store, let detailed, let out, let refresh, let repair, let options):
                return try PlanCommand(job: job, store: store, detailedExitCode: detailed, out: out, refresh: refresh,
                                       repair: repair, options: options,
                                       console: console, environment: environment).run().rawValue
            case .apply(let job, let store, let report, let refresh, let repair, let options):
                return try ApplyCommand(job: job, store: store, reportPath: report, refresh: refresh, repair: repair, options: options,
                                        console: console, environment: environment).run().rawValue
            case .audit(let store, let verify, let manifest, let options):
                return try AuditCommand(store: store, verify: verify, manifest: manifest, options: options,
                                        console: console, environment: environment).run().rawValue
            }
        } catch {
            report(error, console: console, json: wantsJSON, verbose: verbose)
            return error.exitCode.rawValue
        }
    }

    /// Prints an error: JSON on stdout with --json (and one line on stderr), else text on stderr.
    static func report(_ error: CLIError, console: Console, json: Bool, verbose: Bool) {
        if json { console.out(error.json.serialized(.prettySorted) + "\n") }
        var text = "error: \(error.message)\n"
        for diagnostic in error.diagnostics { text += "  \(diagnostic)\n" }
        if verbose, let cause = error.cause { text += "  cause: \(cause)\n" }
        console.err(text)
    }
}
