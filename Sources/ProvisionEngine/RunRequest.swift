import ProvisionModel

/// What a plan or an apply is asked to do: the job, the store and the options `provision plan`
/// and `provision apply` share. One value, so the command line, the plan and the apply read the
/// same fields.
public struct RunRequest: Sendable {
    /// The job file (`-` for standard input); for an apply also a plan saved by `plan --out`.
    public var job: String
    /// `--store`.
    public var store: String?
    /// `--refresh`: a plan counts what has expired; an apply revalidates it (damaged rows are fetched again).
    public var refresh = false
    /// `--repair`: damaged rows are changes; an apply removes them first, so they are fetched again.
    public var repair = false
    /// Files the command will write (`--out`, `--report`, the pictures): refused when they are the store's.
    public var outputs: [(flag: String, path: String)] = []
    /// `--shard`: only this share of the job's tiles, into a partial store.
    public var shard: Shard?

    /// The request for `job`, the other fields as given.
    public init(job: String, store: String? = nil, refresh: Bool = false, repair: Bool = false) {
        self.job = job
        self.store = store
        self.refresh = refresh
        self.repair = repair
    }
}

extension RunRequest: Equatable {
    /// Field by field (the outputs are tuples, which are not `Equatable`).
    public static func == (a: RunRequest, b: RunRequest) -> Bool {
        a.job == b.job && a.store == b.store && a.refresh == b.refresh && a.repair == b.repair && a.shard == b.shard
            && a.outputs.map(\.flag) == b.outputs.map(\.flag) && a.outputs.map(\.path) == b.outputs.map(\.path)
    }
}
