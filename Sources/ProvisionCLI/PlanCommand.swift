import Foundation
import ProvisionFoundation
import ProvisionCoverage
import ProvisionEngine
import ProvisionModel
import ProvisionReports
import ProvisionStore

/// `provision plan JOB`: what apply would change. Writes nothing but `--out`, downloads no tile.
struct PlanCommand {
    let arguments: PlanArguments
    let view: CommandView
    let context: RunContext

    func run() throws(ProvisionError) -> ExitCode {
        if let out = arguments.out { try checkWritableOutput(out, flag: "--out") }
        try arguments.coverage.checkWritable()
        var run = PlanRun(request: try arguments.run.request(outputs: arguments.outputs, environment: context.environment),
                          context: context, progress: view.progress)
        run.offline = arguments.offline
        let (plan, session) = try run.run()
        // The pictures are drawn before anything is written, so a --zoom the plan lacks writes nothing.
        var maps: [CoverageMap] = []
        for options in arguments.coverage.requests { maps.append(try session.coverage(of: plan, options: options)) }
        if let out = arguments.out {
            let saved = try PlanRun.saved(plan, session: session, jobPath: arguments.run.request.job)
            do {
                try AtomicFile.write(saved.json.data(.prettySorted) + Data("\n".utf8), to: URL(fileURLWithPath: out))
            } catch {
                throw ProvisionError(.cannotWriteStore, "cannot write the plan to \(out): \(describe(error))", cause: error)
            }
            view.progress.emit(.planSaved(path: out))
        }
        try arguments.coverage.write(maps, progress: view.progress)
        let document = session.document(plan)
        let file = arguments.coverage.html ?? arguments.coverage.svg
        view.show { results in
            results.plan(document) {
                maps.first.flatMap { map in file.map { CoverageRenderer.markdownLine(map, file: $0, url: arguments.htmlURL) } }
            }
        }
        return arguments.detailedExitCode && plan.hasChanges ? .changesPresent : .success
    }
}
