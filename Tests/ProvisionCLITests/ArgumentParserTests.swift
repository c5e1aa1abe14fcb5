@testable import ProvisionCLI
import XCTest

/// The parser, as a table of named cases (Terraform's `arguments/plan_test.go` style): each
/// command line gives one invocation or one usage error.
final class ArgumentParserTests: XCTestCase {
    private struct Case {
        var name: String
        var arguments: [String]
        var expected: Result<Invocation, UsageError>
    }

    private static func ok(_ name: String, _ arguments: [String], _ invocation: Invocation) -> Case {
        Case(name: name, arguments: arguments, expected: .success(invocation))
    }

    /// A usage error, printed as the output options `options` the line asked for.
    private static func usage(_ name: String, _ arguments: [String], _ message: String, command: String? = nil,
                              options: CommonOptions = CommonOptions()) -> Case {
        Case(name: name, arguments: arguments, expected: .failure(UsageError(message: message, command: command, options: options)))
    }

    private static let json = CommonOptions(format: .json)

    func testPlan() {
        let cases: [Case] = [
            Self.ok("defaults", ["plan", "job.json"], .plan(PlanArguments(job: "job.json"))),
            Self.ok("every option", ["plan", "--store", "s", "--detailed-exitcode", "--refresh", "--repair", "--out", "p.json",
                                     "--format", "markdown", "--progress", "plain", "--verbose", "job.json"],
                    .plan(PlanArguments(job: "job.json", store: "s", detailedExitCode: true, out: "p.json", refresh: true, repair: true,
                                        options: CommonOptions(format: .markdown, progress: .plain, verbose: true)))),
            Self.ok("--json", ["plan", "--json", "job.json"], .plan(PlanArguments(job: "job.json", options: Self.json))),
            Self.ok("--format=json", ["plan", "--format=json", "job.json"], .plan(PlanArguments(job: "job.json", options: Self.json))),
            Self.ok("--quiet", ["plan", "--quiet", "job.json"],
                    .plan(PlanArguments(job: "job.json", options: CommonOptions(progress: .none)))),
            Self.ok("stdin", ["plan", "-", "--store", "s"], .plan(PlanArguments(job: "-", store: "s"))),
            Self.ok("after --", ["plan", "--", "--odd-name.json"], .plan(PlanArguments(job: "--odd-name.json"))),
            Self.ok("--store=value", ["plan", "--store=dir", "job.json"], .plan(PlanArguments(job: "job.json", store: "dir"))),
            Self.usage("json and markdown", ["plan", "--json", "--format", "markdown", "j"],
                       "--format markdown conflicts with --json; give one of them", command: "plan", options: Self.json),
            Self.usage("markdown then json", ["plan", "--format", "markdown", "--json", "j"],
                       "--json conflicts with --format markdown; give one of them", command: "plan", options: Self.json),
            Self.usage("two formats", ["plan", "--format", "text", "--format", "json", "j"], "--format is given twice; give it once",
                       command: "plan", options: Self.json),
            Self.usage("quiet and progress", ["plan", "--quiet", "--progress", "json", "j"],
                       "--progress json conflicts with --quiet; give one of them", command: "plan",
                       options: CommonOptions(progress: .json)),
            Self.usage("bad format", ["plan", "--format", "html", "j"], "--format must be text, json or markdown, not 'html'",
                       command: "plan"),
            Self.usage("bad progress", ["plan", "--progress", "fancy", "j"],
                       "--progress must be auto, json, plain, tty or none, not 'fancy'", command: "plan"),
            Self.usage("missing value", ["plan", "j", "--store"], "--store needs a value (--store DIR)", command: "plan"),
            Self.usage("option as value", ["plan", "--out", "--json", "j"], "--out needs a value (--out FILE)", command: "plan",
                       options: Self.json),
            Self.usage("empty store", ["plan", "--store", "", "j"], "--store needs a directory path, not an empty string",
                       command: "plan"),
            Self.usage("flag with value", ["plan", "--refresh=yes", "j"], "--refresh takes no value", command: "plan"),
            Self.usage("no job", ["plan"], "plan needs a job file", command: "plan"),
            Self.usage("two jobs", ["plan", "a", "b"], "plan takes one JOB, got 2: a b", command: "plan"),
            Self.usage("out over the job", ["plan", "--out", "./j.json", "j.json"],
                       "--out ./j.json would overwrite the job file j.json; write it elsewhere", command: "plan"),
            Self.usage("saved plan of stdin", ["plan", "--out", "p.json", "-"],
                       "--out needs the job in a file, not on standard input: a saved plan records the job file's path",
                       command: "plan"),
            Self.usage("typo", ["plan", "--detailed-exit-code", "j"],
                       "unknown option '--detailed-exit-code' for 'plan' (did you mean '--detailed-exitcode'?)", command: "plan"),
        ]
        check(cases)
    }

    func testApplyValidateAudit() {
        let cases: [Case] = [
            Self.ok("apply", ["apply", "--report", "r.json", "--repair", "j"],
                    .apply(ApplyArguments(job: "j", report: "r.json", repair: true))),
            Self.ok("apply tty", ["apply", "--progress", "tty", "j"],
                    .apply(ApplyArguments(job: "j", options: CommonOptions(progress: .tty)))),
            Self.usage("two reports", ["apply", "--report", "a.json", "--report", "b.json", "j"],
                       "--report is given twice; give it once", command: "apply"),
            Self.usage("report over the job", ["apply", "--report", "j", "j"],
                       "--report j would overwrite the job file j; write it elsewhere", command: "apply"),
            Self.usage("apply has no --out", ["apply", "--out", "x", "j"], "unknown option '--out' for 'apply'", command: "apply"),
            Self.usage("apply has no --format", ["apply", "--format", "markdown", "j"],
                       "unknown option '--format' for 'apply'", command: "apply", options: CommonOptions(format: .markdown)),
            Self.ok("validate many", ["validate", "a", "b", "--quiet"],
                    .validate(ValidateArguments(jobs: ["a", "b"], options: CommonOptions(progress: .none)))),
            Self.ok("validate progress", ["validate", "--progress", "json", "a"],
                    .validate(ValidateArguments(jobs: ["a"], options: CommonOptions(progress: .json)))),
            Self.usage("validate nothing", ["validate"], "validate needs at least one job file", command: "validate"),
            Self.ok("audit", ["audit", "--verify", "--manifest", "j", "--progress", "json"],
                    .audit(AuditArguments(verify: true, manifest: "j", options: CommonOptions(progress: .json)))),
            Self.ok("audit quiet", ["audit", "--quiet", "--store", "s"],
                    .audit(AuditArguments(store: "s", options: CommonOptions(progress: .none)))),
            Self.usage("audit positional", ["audit", "store"], "audit takes no positional arguments (use --store DIR), got 'store'",
                       command: "audit"),
        ]
        check(cases)
    }

    func testMerge() {
        let cases: [Case] = [
            Self.ok("one store", ["merge", "s0", "--store", "out"], .merge(MergeArguments(stores: ["s0"], store: "out"))),
            Self.ok("many, in the order given", ["merge", "--store=out", "s2", "s0", "s1", "--json", "--progress", "json"],
                    .merge(MergeArguments(stores: ["s2", "s0", "s1"], store: "out", options: CommonOptions(format: .json, progress: .json)))),
            Self.ok("after --", ["merge", "--store", "out", "--", "--odd"], .merge(MergeArguments(stores: ["--odd"], store: "out"))),
            Self.usage("no store", ["merge", "--store", "out"], "merge needs at least one store", command: "merge"),
            Self.usage("no --store", ["merge", "s0", "s1"], "merge needs --store DIR: the store to write", command: "merge"),
            Self.usage("empty --store", ["merge", "s0", "--store", ""], "--store needs a directory path, not an empty string",
                       command: "merge"),
            Self.usage("--store twice", ["merge", "s0", "--store", "a", "--store", "b"], "--store is given twice; give it once",
                       command: "merge"),
            Self.usage("--store is an input", ["merge", "s0", "./s1/", "--store", "s1"],
                       "--store s1 is the input ./s1/; merge into another directory", command: "merge"),
            Self.usage("no --format", ["merge", "s0", "--store", "out", "--format", "json"],
                       "unknown option '--format' for 'merge'", command: "merge", options: Self.json),
        ]
        check(cases)
    }

    /// A line that does not parse carries the output options it asked for, read past the error,
    /// so the error is printed as asked (JSON on stdout, an NDJSON event, the cause).
    func testAUsageErrorCarriesTheOutputOptions() {
        let cases: [Case] = [
            Self.usage("json before the error", ["plan", "--json", "--bogus", "j"], "unknown option '--bogus' for 'plan'",
                       command: "plan", options: Self.json),
            Self.usage("json after the error", ["plan", "--bogus", "--format=json", "--verbose", "j"],
                       "unknown option '--bogus' for 'plan'", command: "plan", options: CommonOptions(format: .json, verbose: true)),
            Self.usage("progress after a rule", ["plan", "--svg", "z.svg", "--progress", "json", "j"], "--svg goes with --zoom",
                       command: "plan", options: CommonOptions(progress: .json)),
            Self.usage("quiet after progress", ["apply", "--progress", "json", "--quiet", "j"],
                       "--quiet conflicts with --progress json; give one of them", command: "apply",
                       options: CommonOptions(progress: .none)),
            Self.usage("a bad value", ["audit", "--progress", "plain", "--svg", "a.svg", "--zoom", "99"],
                       "--zoom must be a whole number from 0 to 22, not '99'", command: "audit", options: CommonOptions(progress: .plain)),
            Self.usage("a command rule", ["merge", "s0", "--json", "--store", "s0"], "--store s0 is the input s0; merge into another directory",
                       command: "merge", options: Self.json),
            Self.usage("unknown command", ["plam", "j", "--json", "--progress", "json"], "unknown command 'plam' (did you mean 'plan'?)",
                       options: CommonOptions(format: .json, progress: .json)),
            Self.usage("an output option the command lacks", ["apply", "--format", "json", "j"], "unknown option '--format' for 'apply'",
                       command: "apply", options: Self.json),
            Self.usage("export's own format", ["export", "--format", "json", "--out", "x"],
                       "--format must be mbtiles, pmtiles, bundle or patch, not 'json'", command: "export"),
        ]
        check(cases)
    }

    func testExport() {
        let cases: [Case] = [
            Self.ok("archive", ["export", "--format", "pmtiles", "--out", "x.pmtiles", "--source", "streets"],
                    .export(ExportArguments(format: .pmtiles, source: "streets", out: "x.pmtiles"))),
            Self.ok("patch", ["export", "--format", "patch", "--since", "v1", "--out", "p.db"],
                    .export(ExportArguments(format: .patch, out: "p.db", since: "v1"))),
            Self.usage("no format", ["export", "--out", "x"], "export needs --format mbtiles, pmtiles, bundle or patch", command: "export"),
            Self.usage("no out", ["export", "--format", "bundle"], "export needs --out FILE or DIR: where to write", command: "export"),
            Self.usage("bundle of one source", ["export", "--format", "bundle", "--source", "s", "--out", "b"],
                       "--source goes with --format mbtiles or pmtiles; a bundle holds every source of its styles", command: "export"),
        ]
        check(cases)
    }

    func testTopLevel() {
        let cases: [Case] = [
            Self.ok("nothing", [], .help(topic: nil)),
            Self.ok("--help", ["--help"], .help(topic: nil)),
            Self.ok("help plan", ["help", "plan"], .help(topic: "plan")),
            Self.ok("plan --help", ["plan", "--bogus", "--help"], .help(topic: "plan")),
            Self.ok("-h after --", ["plan", "--", "-h"], .plan(PlanArguments(job: "-h"))),
            Self.ok("--version", ["--version"], .version),
            Self.usage("unknown command", ["plam"], "unknown command 'plam' (did you mean 'plan'?)"),
            Self.usage("help of nothing", ["help", "frobnicate"], "unknown command 'frobnicate'"),
        ]
        check(cases)
    }

    private func check(_ cases: [Case], file: StaticString = #filePath, line: UInt = #line) {
        for c in cases {
            let actual: Result<Invocation, UsageError>
            do { actual = .success(try ArgumentParser.parse(c.arguments)) } catch { actual = .failure(error) }
            XCTAssertEqual(actual, c.expected, c.name, file: file, line: line)
        }
    }

    func testEveryDeclaredOptionParses() throws {
        // Each option of each command, given alone with a valid value, parses: the declaration
        // and the parser cannot disagree.
        for spec in Commands.all {
            for option in spec.options {
                func given(_ option: OptionSpec) -> [String] {
                    switch option.value {
                    case .flag: return [option.name]
                    case .text: return [option.name, option.example ?? "value"]
                    case .choice(_, let choices): return [option.name, choices[choices.count - 1]]
                    }
                }
                var arguments = [spec.name] + given(option)
                for needed in option.requires {
                    if let other = spec.option(needed) { arguments += given(other) }
                }
                if spec.positionals != .none { arguments.append("job.json") }
                if spec.name == "merge" && option.name != "--store" { arguments += ["--store", "out"] }  // required
                if spec.name == "sign" && option.name != "--key" { arguments += ["--key", "key.pem"] }  // required
                if spec.name == "export" {  // required, and --source goes with an archive format
                    if option.name != "--format" { arguments += ["--format", "pmtiles"] }
                    if option.name != "--out" { arguments += ["--out", "out"] }
                }
                XCTAssertNoThrow(try ArgumentParser.parse(arguments), "\(arguments)")
            }
        }
    }

    func testSignAndTheKeyOptionsParseIntoTheirFields() throws {
        XCTAssertEqual(try ArgumentParser.parse(["sign", "--key", "/dev/fd/3", "--store", "s"]),
                       .sign(SignArguments(store: "s", key: "/dev/fd/3")))
        guard case .apply(let apply) = try ArgumentParser.parse(["apply", "job.json", "--sign-key", "k.pem"]) else {
            return XCTFail("not an apply")
        }
        XCTAssertEqual(apply.signKey, "k.pem")
        guard case .audit(let audit) = try ArgumentParser.parse(["audit", "--verify", "--trusted-key", "p.pem"]) else {
            return XCTFail("not an audit")
        }
        XCTAssertEqual(audit.trustedKey, "p.pem")
        XCTAssertThrowsError(try ArgumentParser.parse(["audit", "--trusted-key", "p.pem"]), "--trusted-key needs --verify")
        XCTAssertThrowsError(try ArgumentParser.parse(["sign", "--store", "s"]), "--key is required")
    }

    func testConflictsAreDeclaredBothWays() {
        for spec in Commands.all {
            for option in spec.options {
                for other in option.conflicts {
                    XCTAssertEqual(spec.option(other)?.conflicts.contains(option.name), true,
                                   "\(spec.name): \(option.name) conflicts with \(other) but not the other way")
                }
            }
        }
    }
}
