import Foundation
import ProvisionFoundation
@testable import ProvisionCLI
import ProvisionEngine
import ProvisionModel
import ProvisionStore
import XCTest

/// Every event as both views render it: the line the text progress modes print (or none), and
/// the NDJSON line of `--progress json`, byte for byte, as `Jobs/schema/events.schema.json` has it.
final class EventViewTests: XCTestCase {
    private static let note = PlanNote(subject: "repair", message: "2 rows were removed")
    private static let diagnostic = Diagnostic(file: "j.json", pointer: "/regions/0", message: "m", line: 3, column: 4)

    /// Each event, its human line, and its NDJSON line after `{"event":…,"elapsed":2`.
    private static let table: [(event: ProvisionEvent, human: String?, json: String)] = [
        (.planStarted(job: "j.json", jobName: "cities", store: "/s"), "Planning cities against /s",
         #""plan-started","elapsed":2.0,"job":"j.json","store":"/s"}"#),
        (.planFinished(hasChanges: true, tilesToDownload: 12, seconds: 0.12345), nil,
         #""plan-finished","elapsed":2.0,"hasChanges":true,"tilesToDownload":12,"seconds":0.123}"#),
        (.planLoaded(path: "p.json"), "Applying the saved plan p.json", #""plan-loaded","elapsed":2.0,"path":"p.json"}"#),
        (.planSaved(path: "p.json"), "Saved the plan to p.json; run 'provision apply p.json' to carry it out.",
         #""plan-saved","elapsed":2.0,"path":"p.json"}"#),
        (.takingOver(previousHolder: ApplyLease.Holder(pid: 7, host: "h", startedAt: "2024-01-01T00:00:00Z")),
         "Taking over the store from a run that was killed (pid 7 on host h, started 2024-01-01T00:00:00Z); resuming its work.",
         #""phase","elapsed":2.0,"phase":"recover"}"#),
        (.recovered(tiles: 1), "Took back 1 tile a killed apply had written.", #""phase","elapsed":2.0,"phase":"recover"}"#),
        (.checkingForDamage, "Re-reading every stored row for damage", #""phase","elapsed":2.0,"phase":"repair"}"#),
        (.rebuilt(note), "repair: 2 rows were removed", #""phase","elapsed":2.0,"phase":"repair"}"#),
        (.checkingRows(reason: "no lock"), "Checking every stored row before reuse: no lock", #""phase","elapsed":2.0,"phase":"repair"}"#),
        (.repaired(rows: 2, unusable: 1, note: note), "repair: 2 rows were removed",
         #""repair","elapsed":2.0,"rows":2,"unusable":1}"#),
        (.phase("tiles"), nil, #""phase","elapsed":2.0,"phase":"tiles"}"#),
        (.downloads(done: 3, total: 10, bytes: 2048, failed: 1), "downloading 3/10 (30%) 2.0 KiB 1/s 1 failed eta 5s",
         #""progress","elapsed":2.0,"done":3,"total":10,"bytes":2048,"failed":1,"rate":1.5}"#),
        (.failure(url: "https://x/1.pbf", reason: "HTTP 500"), nil,
         #""failure","elapsed":2.0,"url":"https://x/1.pbf","reason":"HTTP 500"}"#),
        (.region(key: "paris", tiles: 5, wanted: 6, complete: false), nil,
         #""region","elapsed":2.0,"key":"paris","tiles":5,"wanted":6,"complete":false}"#),
        (.searchPack(id: "places", file: "search/places.db", built: true, entries: 1234, tiles: 56, bytes: 2048, seconds: 0.25),
         "Search pack places: 1,234 places from 56 tiles, 2.0 KiB in search/places.db",
         #""search-pack","elapsed":2.0,"id":"places","built":true,"entries":1234,"bytes":2048,"tiles":56,"seconds":0.25}"#),
        (.searchPack(id: "places", file: "search/places.db", built: false, entries: 1, tiles: 1, bytes: 9, seconds: 0),
         "Search pack places: its tiles are unchanged; search/places.db kept",
         #""search-pack","elapsed":2.0,"id":"places","built":false,"entries":1,"bytes":9,"tiles":1,"seconds":0.0}"#),
        (.routingPack(id: "drive", file: "routing/drive.tar", built: true, tiles: 1200, fetched: 7, absent: 3, bytes: 4096,
                      seconds: 0.5),
         "Routing pack drive: 1,200 graph tiles (3 cells without roads), 7 fetched, 4.0 KiB in routing/drive.tar",
         #""routing-pack","elapsed":2.0,"id":"drive","built":true,"tiles":1200,"fetched":7,"absent":3,"bytes":4096,"seconds":0.5}"#),
        (.routingPack(id: "drive", file: "routing/drive.tar", built: false, tiles: 8, fetched: 0, absent: 0, bytes: 10240, seconds: 0),
         "Routing pack drive: its graph tiles are unchanged; routing/drive.tar kept",
         #""routing-pack","elapsed":2.0,"id":"drive","built":false,"tiles":8,"fetched":0,"absent":0,"bytes":10240,"seconds":0.0}"#),
        (.stopping(signal: 15), "\nStopping: finishing the downloads in flight and committing them (signal again to quit now)",
         #""stopping","elapsed":2.0,"signal":15}"#),
        (.applyFinished(status: "complete", downloaded: 9, failed: 0), nil,
         #""apply-finished","elapsed":2.0,"status":"complete","downloaded":9,"failed":0}"#),
        (.auditFinished(whole: true, ok: false, regions: 2, tiles: 30), nil,
         #""audit-finished","elapsed":2.0,"whole":true,"ok":false,"regions":2,"tiles":30}"#),
        (.validateFinished([JobCheck(path: "a.json", outcome: .valid(regions: 1, stylePacks: 2)),
                            JobCheck(path: "b.json", outcome: .invalid([diagnostic])),
                            JobCheck(path: "c.json", outcome: .unreadable(location: "c.json", reason: "no such file"))]), nil,
         #""validate-finished","elapsed":2.0,"valid":false,"files":[{"file":"a.json","valid":true,"problems":[]},"#
            + #"{"file":"b.json","valid":false,"problems":[{"file":"j.json","pointer":"/regions/0","message":"m","line":3,"column":4}]},"#
            + #"{"file":"c.json","valid":false,"unreadable":"no such file","problems":[]}]}"#),
        (.coverageWritten(path: "c.svg", kind: "plan", format: "svg", zooms: [3, 4, 5], cells: 1, bytes: 1536),
         "Wrote the plan coverage picture to c.svg (z3–5, 1 cell, 1.5 KiB)",
         #""coverage-written","elapsed":2.0,"path":"c.svg","format":"svg","zooms":[3,4,5],"cells":1,"bytes":1536}"#),
        (.coverageWritten(path: "c.html", kind: "audit", format: "html", zooms: [], cells: 0, bytes: 10),
         "Wrote the audit coverage picture to c.html (no zoom, 0 cells, 10 B)",
         #""coverage-written","elapsed":2.0,"path":"c.html","format":"html","zooms":[],"cells":0,"bytes":10}"#),
        (.mergeStarted(store: "/out", shards: 2, tiles: 40, jobName: "cities"), "Merging 2 shards of cities into /out",
         #""merge-started","elapsed":2.0,"store":"/out","shards":2,"tiles":40}"#),
        (.sideLoadStarted(store: "/out", databases: 1, tiles: 4), "Merging 1 offline database into /out",
         #""merge-started","elapsed":2.0,"store":"/out","shards":1,"tiles":4}"#),
        (.notMerged(url: "https://x/2.pbf", database: "d.db", reason: "not a tile"), nil,
         #""failure","elapsed":2.0,"url":"https://x/2.pbf","reason":"not merged from d.db: not a tile"}"#),
        (.mergeFinished(tiles: 40, resources: 3, bytes: 1000), nil,
         #""merge-finished","elapsed":2.0,"tiles":40,"resources":3,"bytes":1000}"#),
        (.exportStarted(store: "/s", format: "pmtiles", files: 2, tiles: 1234), "Exporting 2 tilesets of /s to pmtiles",
         #""export-started","elapsed":2.0,"store":"/s","format":"pmtiles","files":2,"tiles":1234}"#),
        (.bundleStarted(store: "/s", out: "/b", stylePacks: 1, files: 2, tiles: 12), "Exporting a bundle of 1 style pack and 2 tilesets of /s to /b",
         #""export-started","elapsed":2.0,"store":"/s","format":"bundle","files":2,"tiles":12}"#),
        (.exportFile(path: "/b/v.pmtiles", source: "v", tiles: 1234, distinct: 1000, bytes: 2048),
         "  v: 1,234 tiles (1,000 distinct) → /b/v.pmtiles, 2.0 KiB",
         #""export-file","elapsed":2.0,"path":"/b/v.pmtiles","source":"v","tiles":1234,"bytes":2048}"#),
        (.exportFinished(files: 2, tiles: 1234, bytes: 4096), nil,
         #""export-finished","elapsed":2.0,"files":2,"tiles":1234,"bytes":4096}"#),
        (.partialExport(reason: "region 'x' is incomplete"), "warning: the export is partial: region 'x' is incomplete",
         #""warning","elapsed":2.0,"message":"the export is partial: region 'x' is incomplete"}"#),
        (.lockSigned(lock: "/s/provision.lock.json", signature: "/s/provision.lock.json.sig"),
         "Signed /s/provision.lock.json: /s/provision.lock.json.sig",
         #""lock-signed","elapsed":2.0,"lock":"/s/provision.lock.json","signature":"/s/provision.lock.json.sig"}"#),
        (.signatureRemoved(lock: "/s/provision.lock.json", signature: "/s/provision.lock.json.sig"),
         "The lock changed: its signature was removed (/s/provision.lock.json.sig no longer matched /s/provision.lock.json); "
             + "run 'provision sign --key KEY.pem' to sign it again",
         #""signature-removed","elapsed":2.0,"lock":"/s/provision.lock.json","signature":"/s/provision.lock.json.sig"}"#),
        (.signatureVerified(lock: "/s/provision.lock.json", signature: "/s/provision.lock.json.sig"),
         "The signature /s/provision.lock.json.sig of /s/provision.lock.json is the trusted key's.",
         #""signature-verified","elapsed":2.0,"lock":"/s/provision.lock.json","signature":"/s/provision.lock.json.sig"}"#),
    ]

    func testEachEventInBothViews() {
        for row in Self.table {
            XCTAssertEqual(HumanView.line(row.event, elapsed: 2), row.human, "\(row.event)")
            let (name, fields) = JSONView.event(row.event, elapsed: 2)
            XCTAssertEqual(JSONView.line(name, fields, elapsed: 2), #"{"event":"# + row.json + "\n", "\(row.event)")
        }
    }

    /// The reporter prints the human line in the text modes, the NDJSON line in `json`, nothing in `none`.
    func testTheReporterDrawsEachEventInTheViewItsModeChose() {
        for row in Self.table {
            if case .downloads = row.event { continue }  // throttled and timed: ProgressReporterTests
            for mode in [ProgressMode.plain, .json, .none] {
                let err = ProgressReporterTests.Capture()
                let console = Console(out: { _ in }, err: { err.append($0) })
                ProgressReporter(console: console, mode: mode, clock: { 7 }).emit(row.event)
                switch mode {
                case .plain: XCTAssertEqual(err.value, row.human.map { $0 + "\n" } ?? "", "\(row.event)")
                case .json:
                    XCTAssertEqual(err.value, #"{"event":"# + row.json.replacingOccurrences(of: #""elapsed":2.0"#, with: #""elapsed":0.0"#)
                                   + "\n", "\(row.event)")
                default: XCTAssertEqual(err.value, "", "\(row.event)")
                }
            }
        }
    }

    func testErrorInBothViews() {
        let error = ProvisionError(.invalidJob, "j.json is not a valid job file", diagnostics: [Self.diagnostic])
        XCTAssertEqual(HumanView.error(error, lines: ["u: HTTP 500"], verbose: false),
                       "error: j.json is not a valid job file:\n  u: HTTP 500\n  j.json:3:4: /regions/0: m\n")
        let (name, fields) = JSONView.error(error)
        XCTAssertEqual(JSONView.line(name, fields, elapsed: 0.5),
                       #"{"event":"error","elapsed":0.5,"exitCode":65,"code":"invalidJob","message":"j.json is not a valid job file","#
                       + #""diagnostics":[{"file":"j.json","pointer":"/regions/0","message":"m","line":3,"column":4}]}"# + "\n")
    }

    /// A validation: the human view lists every file (problems on stderr when one is invalid,
    /// nothing with `--quiet` when all are valid); the JSON view is the validation document.
    func testValidationInBothViews() {
        let valid = [JobCheck(path: "a.json", outcome: .valid(regions: 1, stylePacks: 2))]
        let invalid = valid + [JobCheck(path: "b.json", outcome: .invalid([Self.diagnostic]))]
        XCTAssertEqual(HumanView.Results().validation(valid), .result("a.json: valid (1 region, 2 style packs)\n"))
        XCTAssertNil(HumanView.Results(quiet: true).validation(valid))
        XCTAssertEqual(HumanView.Results(quiet: true).validation(invalid),
                       .problems("a.json: valid (1 region, 2 style packs)\nb.json: 1 problem\n  j.json:3:4: /regions/0: m\n"))
        guard case .result(let text) = JSONView.Results().validation(invalid) else { return XCTFail("no document") }
        let document = try? JSONValue.parse(Data(text.utf8))
        XCTAssertEqual(document?["kind"], "validation")
        XCTAssertEqual(document?["valid"], false)
        XCTAssertEqual(document?["files"]?.arrayValue?.map { $0["file"] }, ["a.json", "b.json"])
    }

    /// A failed command: the JSON view puts the error document on stdout, the human view nothing
    /// (stderr says it); only the human view tells how to get help after a usage error.
    func testErrorResultsInBothViews() {
        let error = ProvisionError(.usage, "bad")
        XCTAssertNil(HumanView.Results().error(error))
        XCTAssertEqual(JSONView.Results().error(error).flatMap { try? JSONValue.parse(Data($0.utf8)) }?["exitCode"], .int(64))
        XCTAssertEqual(HumanView.Results().usageHint(command: "plan"), "Run 'provision plan --help' for usage.\n")
        XCTAssertNil(JSONView.Results().usageHint(command: "plan"))
        XCTAssertNil(HumanView.Results().reportOnStdout)
        XCTAssertEqual(JSONView.Results().reportOnStdout, "on stdout")
    }
}
