import Foundation
import ProvisionFoundation
import ProvisionModel
import ProvisionTestSupport
import XCTest

/// Issue 12: the batch engine a sharded apply runs on. A real one-node Slurm (munged, slurmctld,
/// slurmd on 127.0.0.1, started by `SlurmCluster`) runs an array job and a job that depends on
/// it, as `Examples/slurm/submit.sh` submits the shards and the merge. Slurm is a prerequisite
/// `.ci/run` installs, so a machine without it fails here rather than skipping.
final class SlurmClusterTests: XCTestCase {
    private var scratch: URL!
    private var cluster: SlurmCluster?

    override func setUpWithError() throws {
        // Short: the munge socket lives here and a Unix socket path holds 108 bytes.
        scratch = URL(fileURLWithPath: "/tmp").appendingPathComponent("slurm-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    override func tearDown() {
        cluster?.stop()
        cluster = nil
        if let scratch { try? FileManager.default.removeItem(at: scratch) }
    }

    private func script(_ name: String, _ body: String) throws -> URL {
        let url = scratch.appendingPathComponent(name)
        try Data(("#!/bin/sh\nset -eu\n" + body + "\n").utf8).write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: url.path)
        return url
    }

    private func nanoseconds(_ url: URL) throws -> UInt64 {
        let text = try String(contentsOf: url, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        return try XCTUnwrap(UInt64(text), "\(url.lastPathComponent) holds \(text)")
    }

    func testAnArrayOfThreeTasksThenAJobAfterOKOnTheArray() throws {
        let slurm = try SlurmCluster(directory: scratch.appendingPathComponent("cluster"), startupDeadline: 120)
        cluster = slurm
        let out = scratch.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)

        // OUT reaches the jobs through the submitting environment (sbatch's default --export=ALL).
        let task = try script("task.sh", """
            echo "$SLURM_ARRAY_TASK_ID $SLURM_ARRAY_TASK_MIN $SLURM_ARRAY_TASK_COUNT" > "$OUT/task-$SLURM_ARRAY_TASK_ID.txt"
            date +%s%N > "$OUT/task-$SLURM_ARRAY_TASK_ID.end"
            """)
        let merge = try script("merge.sh", """
            date +%s%N > "$OUT/merge.start"
            cat "$OUT"/task-*.txt > "$OUT/all.txt"
            """)
        let environment = ["OUT": out.path]
        let array = try slurm.sbatch(script: task, environment: environment, array: 0...2)
        let dependent = try slurm.sbatch(script: merge, environment: environment, afterOK: [array])
        XCTAssertNotEqual(array, dependent)

        let merged = try slurm.wait(dependent, deadline: 120)
        let tasks = try slurm.wait(array, deadline: 120)

        XCTAssertEqual(merged.map(\.state), ["COMPLETED"], "\(merged)\n\(slurm.logTails())")
        XCTAssertEqual(merged.first?.exitCode, "0:0")
        XCTAssertEqual(tasks.count, 3, "one record per task: \(tasks)")
        XCTAssertEqual(Set(tasks.compactMap(\.arrayTaskID)), ["0", "1", "2"])
        XCTAssertEqual(Set(tasks.compactMap(\.arrayJobID)), [array])
        XCTAssertEqual(Set(tasks.map(\.state)), ["COMPLETED"], "\(tasks)")

        XCTAssertEqual(try String(contentsOf: out.appendingPathComponent("all.txt"), encoding: .utf8),
                       "0 0 3\n1 0 3\n2 0 3\n", "task ids 0, 1, 2; min 0; count 3")
        let mergeStart = try nanoseconds(out.appendingPathComponent("merge.start"))
        for index in 0...2 {
            let end = try nanoseconds(out.appendingPathComponent("task-\(index).end"))
            XCTAssertLessThan(end, mergeStart, "task \(index) ended before the dependent job started")
        }
        let lastEnd = try XCTUnwrap(tasks.compactMap(\.endTime).max())
        let start = try XCTUnwrap(merged.first?.startTime)
        XCTAssertGreaterThanOrEqual(start, lastEnd, "the controller started the dependent job after the array")
    }

    func testStopEndsEveryDaemonAndKeepsTheScratchDirectory() throws {
        let slurm = try SlurmCluster(directory: scratch.appendingPathComponent("cluster"), startupDeadline: 120)
        cluster = slurm
        let ids = ["munged.pid", "slurmctld.pid", "slurmd.pid"].compactMap { name -> pid_t? in
            let text = try? String(contentsOf: slurm.directory.appendingPathComponent(name), encoding: .utf8)
            return text.flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        XCTAssertEqual(ids.count, 3, "each daemon wrote its pid file")
        slurm.stop()
        for id in ids {
            XCTAssertNotEqual(kill(id, 0), 0, "process \(id) is gone")
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: slurm.configurationFile.path), "the scratch directory stays")
    }

    /// A stand-in for `provision` until `--shard` and `merge` exist: `apply` writes one line
    /// (its --shard value, the array task variables, SOURCE_DATE_EPOCH, the job file) into its
    /// --store, `merge` concatenates its inputs' lines in the order given, `audit` succeeds.
    private func stubProvision() throws -> URL {
        try script("provision-stub", """
            cmd=$1; shift
            case "$cmd" in
            apply)
              job=$1; shift; shard=; store=
              while [ $# -gt 0 ]; do case $1 in --shard) shard=$2; shift 2;; --store) store=$2; shift 2;; *) shift;; esac; done
              mkdir -p "$store"
              echo "$shard $SLURM_ARRAY_TASK_ID $SLURM_ARRAY_TASK_MIN $SLURM_ARRAY_TASK_COUNT $SOURCE_DATE_EPOCH $job" > "$store/offline.db"
              ;;
            merge)
              out=; inputs=
              while [ $# -gt 0 ]; do case $1 in --store) out=$2; shift 2;; *) inputs="$inputs $1"; shift;; esac; done
              mkdir -p "$out"
              for input in $inputs; do cat "$input/offline.db"; done > "$out/offline.db"
              ;;
            audit) ;;
            *) exit 64 ;;
            esac
            """)
    }

    /// Examples/slurm/submit.sh as written: 7 array tasks of shard.sbatch (at most 4 at once),
    /// then merge.sbatch after all of them, with a stub for provision (PROVISION).
    func testTheSlurmExamplesRunSevenShardsThenTheMerge() throws {
        let slurm = try SlurmCluster(directory: scratch.appendingPathComponent("cluster"), startupDeadline: 120)
        cluster = slurm
        let bundle = scratch.appendingPathComponent("bundle")
        let job = scratch.appendingPathComponent("job.json")
        try Data("{}".utf8).write(to: job)
        let submit = Demo.repositoryRoot.appendingPathComponent("Examples/slurm/submit.sh")
        let submitted = try slurm.client(submit.path, [job.path, bundle.path],
                                         environment: ["PROVISION": try stubProvision().path, "SOURCE_DATE_EPOCH": "1700000000"])
        XCTAssertEqual(submitted.status, 0, submitted.stdout + submitted.stderr)
        func id(_ label: String) throws -> Int {
            let line = submitted.stdout.split(separator: "\n").first { $0.hasPrefix(label) } ?? ""
            let words = line.split(separator: " ")
            let index = try XCTUnwrap(words.firstIndex(of: "job"), "\(label) in \(submitted.stdout)")
            return try XCTUnwrap(Int(words[words.index(after: index)]))
        }
        let array = try id("shards:"), merge = try id("merge:")

        let merged = try slurm.wait(merge, deadline: 180)
        let tasks = try slurm.wait(array, deadline: 30)
        XCTAssertEqual(merged.map(\.state), ["COMPLETED"], "\(merged)\n\(slurm.logTails())")
        XCTAssertEqual(tasks.count, 7, "\(tasks)")
        XCTAssertEqual(Set(tasks.map(\.state)), ["COMPLETED"], "\(tasks)")
        let lines = try String(contentsOf: bundle.appendingPathComponent("store/offline.db"), encoding: .utf8)
        XCTAssertEqual(lines, (0..<7).map { "auto \($0) 0 7 1700000000 \(job.path)\n" }.joined(),
                       "each task ran --shard auto with its index, min 0 and count 7, into shards/<index>")
        XCTAssertFalse(FileManager.default.fileExists(atPath: bundle.appendingPathComponent("store.next").path))
        XCTAssertTrue(FileManager.default.fileExists(atPath: bundle.appendingPathComponent("logs").path))
    }

    /// The real thing: Examples/slurm/submit.sh runs 3 shards of the demo job as an array job
    /// with the built binary, then the merge after them; the merged store is byte-identical to a
    /// single-machine apply at the same SOURCE_DATE_EPOCH.
    func testTheSlurmExamplesBuildTheSameBytesAsOneMachine() throws {
        let slurm = try SlurmCluster(directory: scratch.appendingPathComponent("cluster"), startupDeadline: 120)
        cluster = slurm
        let origins: [(String, JSONValue)] = [(Demo.canonicalTiles, .string("mbtiles:" + Demo.mbtiles.path)),
                                              (Demo.canonicalBase, .string(Demo.directory.path))]
        let job = scratch.appendingPathComponent("job.json")
        try Demo.job(regions: [Demo.london.region(), Demo.paris.region(), Demo.newYork.region(zoom: 10...12)], origins: origins)
            .data(.prettySorted).write(to: job)
        let binary = try ProvisionProcess.binary()
        let single = scratch.appendingPathComponent("single")
        let apply = try ProvisionProcess.provision(["apply", "--quiet", "--store", single.path, job.path], in: scratch,
                                                   environment: ["SOURCE_DATE_EPOCH": "1700000000"])
        XCTAssertEqual(apply.status, 0, apply.stderr)

        let bundle = scratch.appendingPathComponent("bundle")
        let submit = Demo.repositoryRoot.appendingPathComponent("Examples/slurm/submit.sh")
        let submitted = try slurm.client(submit.path, [job.path, bundle.path],
                                         environment: ["PROVISION": binary.path, "SOURCE_DATE_EPOCH": "1700000000",
                                                       "SHARD_COUNT": "3"])
        XCTAssertEqual(submitted.status, 0, submitted.stdout + submitted.stderr)
        let mergeLine = submitted.stdout.split(separator: "\n").first { $0.hasPrefix("merge:") } ?? ""
        let words = mergeLine.split(separator: " ")
        let merge = try XCTUnwrap(words.firstIndex(of: "job").flatMap { Int(words[words.index(after: $0)]) }, submitted.stdout)
        let merged = try slurm.wait(merge, deadline: 180)
        XCTAssertEqual(merged.map(\.state), ["COMPLETED"], "\(merged)\n\(slurm.logTails())")
        for name in ["offline.db", "provision.lock.json"] {
            let ours = try Data(contentsOf: bundle.appendingPathComponent("store/" + name))
            XCTAssertEqual(ours, try Data(contentsOf: single.appendingPathComponent(name)), "\(name): sharded on Slurm and merged")
        }
        for index in 0..<3 {
            let lock = try JSONValue.parse(Data(contentsOf: bundle.appendingPathComponent("shards/\(index)/provision.lock.json")))
            XCTAssertEqual(lock["shard"]?["index"], .int(index))
            XCTAssertEqual(lock["shard"]?["count"], .int(3))
        }
    }
}

/// Issue 12: the Kubernetes and CI examples, checked without a cluster (`kubectl apply
/// --dry-run=client` needs an API server): Examples/kubernetes/check.py parses every file and
/// checks its structure, and run_indexed_locally.py prints the Indexed Job's command for an index.
/// python3 with PyYAML is a prerequisite `.ci/run` installs (python3-yaml).
final class BatchExampleFilesTests: XCTestCase {
    private var python: URL {
        get throws {
            try XCTUnwrap(ProvisionProcess.onPath("python3"), "python3 is missing (.ci/run installs python3-yaml)")
        }
    }

    func testCheckPyFindsNoProblemInTheExamplesAndTheJobFileIsValid() throws {
        let check = Demo.repositoryRoot.appendingPathComponent("Examples/kubernetes/check.py")
        let result = try ProvisionProcess.run(try python, [check.path, "--provision", try ProvisionProcess.binary().path],
                                              in: Demo.repositoryRoot, environment: ProvisionProcess.environment([:]),
                                              timeout: 60)
        XCTAssertEqual(result.status, 0, result.combined)
        XCTAssertTrue(result.stdout.hasSuffix("check: 0 problems\n"), result.combined)
    }

    func testRunIndexedLocallyPrintsThePodsCommandWithItsIndex() throws {
        let script = Demo.repositoryRoot.appendingPathComponent("Examples/kubernetes/run_indexed_locally.py")
        let bundle = FileManager.default.temporaryDirectory.appendingPathComponent("bundle-\(UUID().uuidString)")
        let result = try ProvisionProcess.run(try python, [script.path, "5", "--mount", "/bundle=\(bundle.path)", "--dry-run"],
                                              in: Demo.repositoryRoot, environment: ProvisionProcess.environment([:]),
                                              timeout: 60)
        XCTAssertEqual(result.status, 0, result.combined)
        XCTAssertTrue(result.stderr.contains("JOB_COMPLETION_INDEX=5 PROVISION_SHARD_COUNT=8 SOURCE_DATE_EPOCH=1700000000 "),
                      result.stderr)
        XCTAssertTrue(result.stderr.contains(" --shard auto --store \(bundle.path)/shards/5 --progress plain\n"), result.stderr)
    }

    /// The Indexed Job's container command, read from shard-job.yaml and run for each of its 8
    /// indices with JOB_COMPLETION_INDEX set as the Job controller sets it, then the merge:
    /// byte-identical to one machine's apply at the YAML's SOURCE_DATE_EPOCH.
    func testTheIndexedJobsCommandForEveryIndexThenTheMergeGiveOneMachinesBytes() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("k8s-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let jobs = scratch.appendingPathComponent("jobs"), bundle = scratch.appendingPathComponent("bundle")
        try FileManager.default.createDirectory(at: jobs, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        let origins: [(String, JSONValue)] = [(Demo.canonicalTiles, .string("mbtiles:" + Demo.mbtiles.path)),
                                              (Demo.canonicalBase, .string(Demo.directory.path))]
        let job = jobs.appendingPathComponent("job.json")
        try Demo.job(regions: [Demo.london.region(), Demo.paris.region()], origins: origins).data(.prettySorted).write(to: job)
        let binary = try ProvisionProcess.binary()
        let runner = Demo.repositoryRoot.appendingPathComponent("Examples/kubernetes/run_indexed_locally.py")
        for index in 0..<8 {
            let pod = try ProvisionProcess.run(try python, [runner.path, String(index), "--mount", "/jobs=" + jobs.path,
                                                            "--mount", "/bundle=" + bundle.path, "--provision", binary.path],
                                               in: scratch, environment: ProcessInfo.processInfo.environment, timeout: 60)
            XCTAssertEqual(pod.status, 0, "index \(index): \(pod.stderr)")
        }
        let shards = (0..<8).map { bundle.appendingPathComponent("shards/\($0)").path }
        let merged = try ProvisionProcess.provision(["merge", "--quiet"] + shards.reversed() + ["--store", bundle.appendingPathComponent("store").path],
                                                    in: scratch, environment: ["SOURCE_DATE_EPOCH": "1700000000"])
        XCTAssertEqual(merged.status, 0, merged.stderr)
        let single = scratch.appendingPathComponent("single")
        let apply = try ProvisionProcess.provision(["apply", "--quiet", "--store", single.path, job.path], in: scratch,
                                                   environment: ["SOURCE_DATE_EPOCH": "1700000000"])
        XCTAssertEqual(apply.status, 0, apply.stderr)
        for name in ["offline.db", "provision.lock.json"] {
            XCTAssertEqual(try Data(contentsOf: bundle.appendingPathComponent("store/" + name)),
                           try Data(contentsOf: single.appendingPathComponent(name)), name)
        }
    }
}
