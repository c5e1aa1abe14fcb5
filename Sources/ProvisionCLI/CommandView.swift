import Foundation
import ProvisionFoundation
import ProvisionEngine
import ProvisionExport
import ProvisionModel
import ProvisionReports

/// How a command's result is written on stdout: `HumanView.Results` or `JSONView.Results`.
protocol ResultView: Sendable {
    /// The plan; `coverage` is the Markdown line linking the coverage picture, asked for only by Markdown.
    func plan(_ document: PlanDocument, coverage: () -> String?) -> String
    func apply(_ report: ApplyReport) -> String
    func audit(_ document: AuditDocument) -> String
    func export(_ result: ExportResult) -> String
    func merge(_ result: MergeRun.Result) -> String
    func sideLoad(_ result: SideLoadRun.Result) -> String
    func search(_ report: SearchReport) -> String
    func sign(_ result: SignResult) -> String
    /// The validation of job files, and where it goes; nil when nothing is printed.
    func validation(_ checks: [JobCheck]) -> Printed?
    /// The document an error is on stdout, nil when stderr alone says it.
    func error(_ error: ProvisionError) -> String?
    /// How a partial apply's failure lines name the report when no `--report` file is written:
    /// `on stdout` when the result is the JSON report, else nil.
    var reportOnStdout: String? { get }
    /// What to run for help after a usage error, nil when the output is for programs.
    func usageHint(command: String?) -> String?
}

/// Where a result goes.
enum Printed: Equatable {
    /// On stdout.
    case result(String)
    /// On stderr, in the text progress modes only (the NDJSON stream has them as events).
    case problems(String)
}

/// What a command shows, chosen once from its options: the events on stderr (`--progress`: the
/// human view or NDJSON) and the result on stdout (`--format`: the human view or JSON). Commands
/// hand it events and results and never ask which view it is.
struct CommandView: Sendable {
    let console: Console
    /// Progress, events and errors on stderr.
    let progress: ProgressReporter
    /// Results on stdout.
    let results: any ResultView
    let verbose: Bool

    init(console: Console, options: CommonOptions, environment: [String: String]) {
        self.console = console
        progress = ProgressReporter(console: console, mode: options.progress, environment: environment)
        switch options.format {
        case .json: results = JSONView.Results()
        case .text, .markdown: results = HumanView.Results(markdown: options.format == .markdown, quiet: options.progress == .none)
        }
        verbose = options.verbose
    }

    /// Writes `render(results)` on stdout, after ending a live progress line.
    func show(_ render: (any ResultView) -> String) {
        progress.finish()
        console.out(render(results))
    }

    /// Writes a validation where its view puts it.
    func show(validation checks: [JobCheck]) {
        switch results.validation(checks) {
        case .result(let text): show { _ in text }
        case .problems(let text): progress.errorLines(text)
        case nil: break
        }
    }

    /// A command that failed: the error document on stdout (JSON), and the `error` event or
    /// `error: …` on stderr.
    func error(_ error: ProvisionError) {
        results.error(error).map(console.out)
        progress.error(error, verbose: verbose)
    }

    /// A command line that did not parse: the error, and how to get help (text only).
    func usageError(_ error: ProvisionError, command: String?) {
        self.error(error)
        if let hint = results.usageHint(command: command) { progress.errorLines(hint) }
    }
}
