import Foundation
import ProvisionFoundation
import ProvisionEngine
import ProvisionExport
import ProvisionModel
import ProvisionReports

/// What people read: a line on stderr for the events worth one (most are not: the bar and the
/// result say them), the text (or Markdown) documents on stdout, `error: …` on stderr.
enum HumanView {
    /// The line `event` prints in the text progress modes, nil when it prints none; `elapsed`
    /// is the seconds since the command started (the download rate).
    static func line(_ event: ProvisionEvent, elapsed: Double) -> String? {
        switch event {
        case .planStarted(_, let jobName, let store): return "Planning \(jobName) against \(store)"
        case .planLoaded(let path): return "Applying the saved plan \(path)"
        case .planSaved(let path): return "Saved the plan to \(path); run 'provision apply \(path)' to carry it out."
        case .takingOver(let previous): return "Taking over the store from a run that was killed (\(previous)); resuming its work."
        case .recovered(let tiles): return "Took back \(plural(tiles, "tile")) a killed apply had written."
        case .checkingForDamage: return "Re-reading every stored row for damage"
        case .rebuilt(let note), .repaired(_, _, let note): return "\(note.subject): \(note.message)"
        case .checkingRows(let reason): return "Checking every stored row before reuse: \(reason)"
        case .downloads(let done, let total, let bytes, let failed):
            return ProgressReporter.progressText(done: done, total: total, bytes: bytes, failed: failed,
                                                 rate: ProgressReporter.rate(done: done, elapsed: elapsed))
        case .searchPack(let id, let file, let built, let entries, let tiles, let bytes, _):
            return built ? "Search pack \(id): \(plural(entries, "place")) from \(plural(tiles, "tile")), \(ByteFormat.string(bytes)) in \(file)"
                : "Search pack \(id): its tiles are unchanged; \(file) kept"
        case .routingPack(let id, let file, let built, let tiles, let fetched, let absent, let bytes, _):
            let cells = absent > 0 ? " (\(plural(absent, "cell")) without roads)" : ""
            return built ? "Routing pack \(id): \(plural(tiles, "graph tile"))\(cells), \(grouped(fetched)) fetched, "
                + "\(ByteFormat.string(bytes)) in \(file)"
                : "Routing pack \(id): its graph tiles are unchanged; \(file) kept"
        case .stopping: return "\nStopping: finishing the downloads in flight and committing them (signal again to quit now)"
        case .coverageWritten(let path, let kind, _, let zooms, let cells, let bytes):
            let range = zooms.first.map { first in first == zooms.last ? "z\(first)" : "z\(first)–\(zooms.last ?? 0)" }
            return "Wrote the \(kind) coverage picture to \(path) (\(range ?? "no zoom"), \(plural(cells, "cell")), "
                + "\(ByteFormat.string(Int64(bytes))))"
        case .mergeStarted(let store, let shards, _, let jobName): return "Merging \(plural(shards, "shard")) of \(jobName) into \(store)"
        case .sideLoadStarted(let store, let databases, _): return "Merging \(plural(databases, "offline database")) into \(store)"
        case .exportStarted(let store, let format, let files, _): return "Exporting \(plural(files, "tileset")) of \(store) to \(format)"
        case .bundleStarted(let store, let out, let stylePacks, let files, _):
            return "Exporting a bundle of \(plural(stylePacks, "style pack")) and \(plural(files, "tileset")) of \(store) to \(out)"
        case .exportFile(let path, let source, let tiles, let distinct, let bytes):
            return "  \(source): \(plural(tiles, "tile")) (\(grouped(distinct)) distinct) → \(path), \(ByteFormat.string(Int64(bytes)))"
        case .partialExport(let reason): return "warning: the export is partial: \(reason)"
        case .lockSigned(let lock, let signature): return "Signed \(lock): \(signature)"
        case .signatureRemoved(let lock, let signature):
            return "The lock changed: its signature was removed (\(signature) no longer matched \(lock)); run 'provision sign --key KEY.pem' to sign it again"
        case .signatureVerified(let lock, let signature): return "The signature \(signature) of \(lock) is the trusted key's."
        // Said by the bar, the result, or (failures) the list printed when the apply ends.
        case .planFinished, .phase, .failure, .notMerged, .region, .applyFinished, .auditFinished, .validateFinished,
             .mergeFinished, .exportFinished:
            return nil
        }
    }

    /// `error: …` with `lines` (failed URLs) and the diagnostics indented below; with `verbose`,
    /// the chain of causes.
    static func error(_ error: ProvisionError, lines: [String], verbose: Bool) -> String {
        var text = "error: \(error.message)\(lines.isEmpty ? "" : ":")\n"
        for line in lines { text += "  \(line)\n" }
        for diagnostic in error.diagnostics { text += "  \(diagnostic)\n" }
        if verbose { for cause in error.causeLines() { text += "  caused by: \(cause)\n" } }
        return text
    }

    /// Every job file with its problems: `PATH: valid (…)`, or `PATH: N problems` and each indented.
    static func validation(_ checks: [JobCheck]) -> String {
        checks.map { check in
            switch check.outcome {
            case .valid(let regions, let stylePacks):
                return "\(check.path): valid (\(plural(regions, "region")), \(plural(stylePacks, "style pack")))\n"
            case .invalid(let diagnostics):
                return "\(check.path): \(plural(diagnostics.count, "problem"))\n" + diagnostics.map { "  \($0)\n" }.joined()
            case .unreadable(let location, let reason):
                return "\(check.path): cannot read \(location): \(reason)\n"
            }
        }.joined()
    }

    /// The results as text (`--format text`) or Markdown (`--format markdown`: the plan only; the
    /// other results are text).
    struct Results: ResultView {
        var markdown = false
        /// `--quiet`: a validation that passed prints nothing.
        var quiet = false

        func plan(_ document: PlanDocument, coverage: () -> String?) -> String {
            markdown ? PlanRenderer.markdown(document, coverage: coverage()) : PlanRenderer.text(document)
        }
        func apply(_ report: ApplyReport) -> String { report.text }
        func audit(_ document: AuditDocument) -> String { document.text }
        func export(_ result: ExportResult) -> String { result.text }
        func merge(_ result: MergeRun.Result) -> String { result.text }
        func sideLoad(_ result: SideLoadRun.Result) -> String { result.text }
        func search(_ report: SearchReport) -> String { report.text }
        func sign(_ result: SignResult) -> String { result.text }

        /// Valid files on stdout (nothing with `--quiet`); problems on stderr, in the text progress modes.
        func validation(_ checks: [JobCheck]) -> Printed? {
            let text = HumanView.validation(checks)
            guard checks.allSatisfy(\.isValid) else { return .problems(text) }
            return quiet ? nil : .result(text)
        }

        func error(_ error: ProvisionError) -> String? { nil }
        var reportOnStdout: String? { nil }
        func usageHint(command: String?) -> String? { "Run 'provision \(command.map { "\($0) " } ?? "")--help' for usage.\n" }
    }
}

extension JobCheck {
    /// Whether the file is a valid job.
    var isValid: Bool {
        if case .valid = outcome { return true }
        return false
    }
}
