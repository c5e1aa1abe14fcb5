@testable import ProvisionCLI
import ProvisionEngine
import ProvisionModel
import XCTest

/// `--shard auto` reads the index and count from the batch engine running the process.
final class ShardEnvironmentTests: XCTestCase {
    private struct Case {
        var name: String
        var request: ShardRequest
        var environment: [String: String]
        var expected: Expected

        enum Expected {
            case success(Shard)
            /// A piece of the usage message.
            case failure(String)
        }
    }

    func testEnginesAndTheirMistakes() {
        let cases: [Case] = [
            Case(name: "fixed", request: .fixed(Shard(index: 2, count: 7)), environment: ["JOB_COMPLETION_INDEX": "5"],
                 expected: .success(Shard(index: 2, count: 7))),
            Case(name: "kubernetes with --shard-count", request: .auto(count: 4), environment: ["JOB_COMPLETION_INDEX": "3"],
                 expected: .success(Shard(index: 3, count: 4))),
            Case(name: "kubernetes with PROVISION_SHARD_COUNT", request: .auto(count: nil),
                 environment: ["JOB_COMPLETION_INDEX": "0", "PROVISION_SHARD_COUNT": "2"], expected: .success(Shard(index: 0, count: 2))),
            Case(name: "kubernetes without a count", request: .auto(count: nil), environment: ["JOB_COMPLETION_INDEX": "0"],
                 expected: .failure("JOB_COMPLETION_INDEX gives the index but nothing gives the count")),
            Case(name: "kubernetes index past the count", request: .auto(count: 2), environment: ["JOB_COMPLETION_INDEX": "2"],
                 expected: .failure("give shard 2 of 2, which is not from 0 to 1")),
            Case(name: "slurm", request: .auto(count: nil),
                 environment: ["SLURM_ARRAY_TASK_ID": "12", "SLURM_ARRAY_TASK_MIN": "10", "SLURM_ARRAY_TASK_COUNT": "7"],
                 expected: .success(Shard(index: 2, count: 7))),
            Case(name: "slurm stepped array", request: .auto(count: nil),
                 environment: ["SLURM_ARRAY_TASK_ID": "8", "SLURM_ARRAY_TASK_MIN": "2", "SLURM_ARRAY_TASK_STEP": "3",
                               "SLURM_ARRAY_TASK_COUNT": "4"],
                 expected: .success(Shard(index: 2, count: 4))),
            Case(name: "slurm off the step", request: .auto(count: nil),
                 environment: ["SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_MIN": "2", "SLURM_ARRAY_TASK_STEP": "3",
                               "SLURM_ARRAY_TASK_COUNT": "4"],
                 expected: .failure("is not SLURM_ARRAY_TASK_MIN 2 plus a multiple of SLURM_ARRAY_TASK_STEP 3")),
            Case(name: "slurm count disagrees", request: .auto(count: 3),
                 environment: ["SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_COUNT": "7"],
                 expected: .failure("SLURM_ARRAY_TASK_COUNT is 7 but the count given is 3")),
            Case(name: "gitlab is 1-based", request: .auto(count: nil), environment: ["CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "3"],
                 expected: .success(Shard(index: 0, count: 3))),
            Case(name: "gitlab zero", request: .auto(count: nil), environment: ["CI_NODE_INDEX": "0", "CI_NODE_TOTAL": "3"],
                 expected: .failure("shard -1 of 3")),
            Case(name: "not a number", request: .auto(count: 2), environment: ["JOB_COMPLETION_INDEX": "one"],
                 expected: .failure("JOB_COMPLETION_INDEX must be a whole number, not 'one'")),
            Case(name: "no engine", request: .auto(count: 2), environment: [:],
                 expected: .failure("found no batch engine: set JOB_COMPLETION_INDEX")),
        ]
        for c in cases {
            do {
                let shard = try RunEnvironment.shard(c.request, environment: c.environment)
                guard case .success(let expected) = c.expected else { XCTFail("\(c.name): got \(String(describing: shard))"); continue }
                XCTAssertEqual(shard, expected, c.name)
            } catch {
                guard case .failure(let message) = c.expected else { XCTFail("\(c.name): \(error.message)"); continue }
                XCTAssertEqual(error.kind, .usage, c.name)
                XCTAssertTrue(error.message.contains(message), "\(c.name): \(error.message)")
            }
        }
    }

    func testShardOptionsParse() throws {
        XCTAssertEqual(try ArgumentParser.parse(["apply", "--shard", "1/4", "j"]),
                       .apply(ApplyArguments(job: "j", shard: .fixed(Shard(index: 1, count: 4)))))
        XCTAssertEqual(try ArgumentParser.parse(["plan", "--shard", "auto", "--shard-count", "3", "j"]),
                       .plan(PlanArguments(job: "j", shard: .auto(count: 3))))
        for (arguments, message) in [
            (["apply", "--shard", "4/4", "j"], "--shard must be I/N with 0 ≤ I < N (e.g. 0/4), or auto, not '4/4'"),
            (["apply", "--shard", "-1/4", "j"], "--shard must be I/N"),
            (["apply", "--shard", "1/0", "j"], "--shard must be I/N"),
            (["apply", "--shard-count", "3", "j"], "--shard-count goes with --shard"),
            (["apply", "--shard", "1/4", "--shard-count", "4", "j"], "--shard 1/4 already says the count"),
            (["apply", "--shard", "auto", "--shard-count", "0", "j"], "--shard-count must be a whole number from 1"),
        ] {
            XCTAssertThrowsError(try ArgumentParser.parse(arguments), "\(arguments)") { error in
                XCTAssertTrue((error as? UsageError)?.message.contains(message) == true, "\(arguments): \(error)")
            }
        }
    }
}
