import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A real one-node Slurm cluster for tests: `munged`, `slurmctld` and `slurmd` of the system's
/// Slurm, started from a scratch directory and reachable only on 127.0.0.1.
///
/// Everything the daemons use (the `slurm.conf`, the munge key, socket, pid and seed files,
/// the controller's state, the node's spool, the logs) lives in the scratch directory, so a
/// system munge or Slurm, or another test's cluster, is never touched: every client call gets
/// `SLURM_CONF` pointing at this cluster's configuration, and the configuration names this
/// cluster's munge socket (`AuthInfo=socket=…`). The daemons run in the foreground (`-D`,
/// `-F`) as children of the test, so `stop()` ends exactly the processes it started.
///
/// Why not Foundation's `Process`: on Linux it learns that a child ended when a socket the child
/// inherited closes, and then blocks in `waitpid` on it; `slurmctld` closes every inherited
/// descriptor as it starts, so Foundation's one monitoring thread blocks on a live daemon and no
/// other child (a `sinfo`, a stopped `slurmd`) is ever reaped. Every child here is started with
/// `posix_spawn` and reaped with `waitpid(WNOHANG)` polled against a deadline (`ChildProcess`).
///
/// Why these plugins: a container has neither systemd nor a delegated cgroup tree, so process
/// tracking is `proctrack/linuxproc` (parent pids), tasks are not bound (`task/none`), and there
/// is no accounting (`accounting_storage/none`, so no `sacct`: `wait` reads `scontrol show job`).
/// The scheduler runs every second (`sched_interval=1`), so a dependent job starts within about
/// a second of the jobs it waits for.
public final class SlurmCluster: @unchecked Sendable {
    /// The scratch directory holding the configuration, the daemons' files and their logs.
    public let directory: URL
    /// The cluster's `slurm.conf`; `SLURM_CONF` points at it for every client call.
    public var configurationFile: URL { directory.appendingPathComponent("slurm.conf") }
    /// The port `slurmctld` listens on (127.0.0.1).
    public let controllerPort: Int
    /// The port `slurmd` listens on (127.0.0.1).
    public let nodePort: Int
    /// The node's name in the configuration (its address is 127.0.0.1).
    public let nodeName = "localhost"
    /// The one partition, the default.
    public let partition = "test"
    /// The munge socket the cluster authenticates through.
    public var mungeSocket: URL { directory.appendingPathComponent("munge.sock") }

    private var daemons: [ChildProcess] = []
    private var clientCalls = 0
    private let lock = NSLock()

    /// An error setting the cluster up or talking to it, with the output that explains it.
    public struct SlurmError: Error, CustomStringConvertible {
        /// What failed, with the tool's output or the daemons' logs.
        public var description: String
    }

    /// One line of `scontrol show job -o`: a job, an array task, or the still-pending rest of an array.
    public struct JobRecord: Sendable, CustomStringConvertible {
        /// Every `Key=Value` field of the line.
        public var fields: [String: String]
        /// `JobId`.
        public var jobID: Int { Int(fields["JobId"] ?? "") ?? -1 }
        /// `ArrayJobId`, for an array task.
        public var arrayJobID: Int? { fields["ArrayJobId"].flatMap { Int($0) } }
        /// `ArrayTaskId`: one index, or a range such as `0-2` for tasks not started yet.
        public var arrayTaskID: String? { fields["ArrayTaskId"] }
        /// `JobState`: PENDING, RUNNING, COMPLETING, COMPLETED, FAILED, CANCELLED, …
        public var state: String { fields["JobState"] ?? "UNKNOWN" }
        /// `ExitCode` as `status:signal`.
        public var exitCode: String { fields["ExitCode"] ?? "" }
        /// `StartTime` (controller time, one-second resolution), when the job has started.
        public var startTime: Date? { Self.date(fields["StartTime"]) }
        /// `EndTime` (controller time, one-second resolution), when the job has ended.
        public var endTime: Date? { Self.date(fields["EndTime"]) }
        /// Whether the job will not change state any more.
        public var isFinished: Bool { SlurmCluster.finishedStates.contains(state) }
        /// The line's fields, for failure messages.
        public var description: String {
            "JobId=\(jobID) ArrayTaskId=\(arrayTaskID ?? "-") JobState=\(state) ExitCode=\(exitCode)"
        }

        private static func date(_ text: String?) -> Date? {
            guard let text, text.first?.isNumber == true else { return nil }
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
            return formatter.date(from: text)
        }
    }

    /// Job states after which a job never runs again.
    static let finishedStates: Set<String> = [
        "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL",
        "DEADLINE", "PREEMPTED",
    ]

    /// Writes the configuration and a munge key into `directory` (created if missing), starts
    /// `munged`, `slurmctld` and `slurmd`, and returns once `sinfo` shows the node idle, or throws
    /// (with the daemons' logs) when that has not happened by `startupDeadline` seconds.
    public init(directory: URL, startupDeadline: TimeInterval = 60) throws {
        self.directory = directory.standardizedFileURL
        controllerPort = try NginxTLSServer.freePort()
        var node = try NginxTLSServer.freePort()
        while node == controllerPort { node = try NginxTLSServer.freePort() }
        nodePort = node
        let deadline = Date().addingTimeInterval(startupDeadline)
        do {
            try prepareDirectory()
            try startMunge(deadline: deadline)
            try writeConfiguration(node: try nodeHardware())
            try startDaemon("slurmctld", ["-D", "-i", "-f", configurationFile.path])
            try startDaemon("slurmd", ["-D", "-N", nodeName, "-f", configurationFile.path])
            try waitUntilIdle(deadline: deadline)
        } catch {
            stop()
            throw error
        }
    }

    deinit {
        stop()
    }

    // MARK: - Jobs

    /// Submits `script` with `sbatch --parsable` and returns the job id (for an array, the array's
    /// job id). `array` adds `--array=lower-upper`, `afterOK` adds `--dependency=afterok:ID:ID…`,
    /// `arguments` are further `sbatch` options put before the script; `environment` is added to
    /// the submitting environment, which the job inherits (`--export=ALL`, Slurm's default).
    /// Output goes to `slurm-%A_%a.out` in the scratch directory unless `arguments` name `--output`.
    @discardableResult
    public func sbatch(script: URL, arguments: [String] = [], environment: [String: String] = [:],
                       array: ClosedRange<Int>? = nil, afterOK: [Int] = []) throws -> Int {
        var options = ["--parsable", "--partition=\(partition)", "--chdir=\(directory.path)"]
        if !arguments.contains(where: { $0 == "-o" || $0.hasPrefix("--output") }) {
            options.append("--output=\(directory.appendingPathComponent("slurm-%A_%a.out").path)")
        }
        if let array { options.append("--array=\(array.lowerBound)-\(array.upperBound)") }
        if !afterOK.isEmpty { options.append("--dependency=afterok:" + afterOK.map(String.init).joined(separator: ":")) }
        let result = try client("sbatch", options + arguments + [script.path], environment: environment)
        // --parsable prints "jobid" or "jobid;cluster".
        let first = result.stdout.split(whereSeparator: { $0 == ";" || $0 == "\n" }).first.map(String.init) ?? ""
        guard result.status == 0, let id = Int(first.trimmingCharacters(in: .whitespaces)) else {
            throw SlurmError(description: "sbatch \(script.lastPathComponent) failed (\(result.status)):\n\(result.stdout)\(result.stderr)")
        }
        return id
    }

    /// The controller's records of job `jobID` (one per array task, plus one for tasks not
    /// started yet); empty once the controller has forgotten the job (`MinJobAge`, 600 s here).
    public func jobs(_ jobID: Int) throws -> [JobRecord] {
        let result = try client("scontrol", ["show", "job", "-o", String(jobID)])
        if result.status != 0 {
            if result.stderr.contains("Invalid job id") { return [] }
            throw SlurmError(description: "scontrol show job \(jobID) failed (\(result.status)):\n\(result.stderr)")
        }
        return result.stdout.split(separator: "\n").map { line in
            var fields: [String: String] = [:]
            for field in line.split(separator: " ") {
                let parts = field.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard parts.count == 2 else { continue }
                fields[String(parts[0])] = String(parts[1])
            }
            return JobRecord(fields: fields)
        }
    }

    /// Polls `scontrol show job` until every record of `jobID` (every task of an array) is
    /// finished, and returns the records; throws, with the records and the daemons' log tails,
    /// when that has not happened `deadline` seconds from now.
    @discardableResult
    public func wait(_ jobID: Int, deadline: TimeInterval = 120) throws -> [JobRecord] {
        let end = Date().addingTimeInterval(deadline)
        var records: [JobRecord] = []
        while Date() < end {
            records = try jobs(jobID)
            if !records.isEmpty, records.allSatisfy(\.isFinished) { return records }
            try checkDaemonsRunning()
            usleep(200_000)
        }
        throw SlurmError(description: """
            job \(jobID) did not finish in \(deadline) s: \(records.map(\.description).joined(separator: "; "))
            \(logTails())
            """)
    }

    /// Runs a Slurm client tool (`sinfo`, `squeue`, `scontrol`, `scancel`, …), or a script when
    /// `tool` is a path, against this cluster, with `SLURM_CONF` set, and returns its status and output.
    public func client(_ tool: String, _ arguments: [String], environment extra: [String: String] = [:],
                       timeout: TimeInterval = 30) throws -> (status: Int32, stdout: String, stderr: String) {
        let executable = tool.contains("/") ? URL(fileURLWithPath: tool) : try self.tool(tool, sbin: false)
        lock.lock()
        clientCalls += 1
        let serial = clientCalls
        lock.unlock()
        let out = directory.appendingPathComponent("client-\(serial).out")
        let err = directory.appendingPathComponent("client-\(serial).err")
        defer {
            try? FileManager.default.removeItem(at: out)
            try? FileManager.default.removeItem(at: err)
        }
        let child = try ChildProcess(name: tool, executable: executable, arguments: arguments,
                                     environment: environment(extra), stdout: out, stderr: err)
        guard let status = child.wait(timeout: timeout) else {
            child.kill()
            throw SlurmError(description: "\(tool) \(arguments.joined(separator: " ")) did not finish in \(timeout) s")
        }
        let stdout = (try? String(contentsOf: out, encoding: .utf8)) ?? ""
        let stderr = (try? String(contentsOf: err, encoding: .utf8)) ?? ""
        return (status, stdout, stderr)
    }

    /// The environment a client (or a job submitted with `sbatch`) gets: the test's, without any
    /// `SLURM_*` variable of an enclosing Slurm job, with `SLURM_CONF` set, plus `extra`.
    public func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SLURM_") }
        env["SLURM_CONF"] = configurationFile.path
        return env.merging(extra) { _, new in new }
    }

    /// Cancels this cluster's jobs, then stops `slurmd`, `slurmctld` and `munged` (SIGTERM, then
    /// SIGKILL after 10 s). Leaves the scratch directory, and the files jobs wrote, in place.
    public func stop() {
        lock.lock()
        let running = daemons
        daemons = []
        lock.unlock()
        guard !running.isEmpty else { return }
        if running.contains(where: { $0.name == "slurmctld" && $0.exitStatus() == nil }) {
            _ = try? client("scancel", ["--me", "--full"], timeout: 10)
        }
        for daemon in running.reversed() where daemon.exitStatus() == nil {
            daemon.signal(SIGTERM)
            if daemon.wait(timeout: 10) == nil { daemon.kill() }
        }
    }

    /// The last lines of every daemon's log, for failure messages.
    public func logTails(lines: Int = 15) -> String {
        ["munged.stderr", "slurmctld.log", "slurmctld.stderr", "slurmd.log", "slurmd.stderr"].compactMap { name in
            guard let text = try? String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8) else { return nil }
            let tail = text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
            return "--- \(name)\n\(tail)"
        }.joined(separator: "\n")
    }

    // MARK: - Setting up

    private func prepareDirectory() throws {
        let fm = FileManager.default
        // munged requires execute permission for everyone on the socket's directory, and a key
        // directory nobody else can write.
        for sub in ["", "state", "spool"] {
            try fm.createDirectory(at: directory.appendingPathComponent(sub), withIntermediateDirectories: true)
            try fm.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.appendingPathComponent(sub).path)
        }
        let keys = directory.appendingPathComponent("munge-key")
        try fm.createDirectory(at: keys, withIntermediateDirectories: true)
        try fm.setAttributes([.posixPermissions: 0o700], ofItemAtPath: keys.path)
        // sockaddr_un holds 108 bytes.
        guard mungeSocket.path.utf8.count < 100 else {
            throw SlurmError(description: "the scratch directory \(directory.path) is too long for a Unix socket path")
        }
    }

    private func startMunge(deadline: Date) throws {
        let key = directory.appendingPathComponent("munge-key/munge.key")
        let mungekey = try tool("mungekey", sbin: true)
        let created = try runTool(mungekey, ["--create", "--force", "--keyfile=\(key.path)"])
        guard created.status == 0 else {
            throw SlurmError(description: "mungekey --create failed (\(created.status)):\n\(created.output)")
        }
        try startDaemon("munged", ["-F", "--socket=\(mungeSocket.path)", "--key-file=\(key.path)",
                                   "--pid-file=\(directory.appendingPathComponent("munged.pid").path)",
                                   "--seed-file=\(directory.appendingPathComponent("munged.seed").path)"])
        while Date() < deadline {
            if FileManager.default.fileExists(atPath: mungeSocket.path) { return }
            try checkDaemonsRunning()
            usleep(20_000)
        }
        throw SlurmError(description: "munged did not create \(mungeSocket.path) in time\n\(logTails())")
    }

    /// What `slurmd -C` reports for this machine: CPUs, boards, sockets, cores, threads and
    /// RealMemory, so the node is never drained for having less than the configuration says.
    private func nodeHardware() throws -> String {
        let probe = try runTool(try tool("slurmd", sbin: true), ["-C"])
        let line = probe.output.split(separator: "\n").first { $0.hasPrefix("NodeName=") } ?? ""
        let keys = ["CPUs", "Boards", "SocketsPerBoard", "CoresPerSocket", "ThreadsPerCore", "RealMemory"]
        let fields = line.split(separator: " ").filter { field in keys.contains { field.hasPrefix($0 + "=") } }
        guard probe.status == 0, fields.count == keys.count else {
            throw SlurmError(description: "slurmd -C did not describe this machine (\(probe.status)):\n\(probe.output)")
        }
        return fields.joined(separator: " ")
    }

    private func writeConfiguration(node hardware: String) throws {
        let dir = directory.path
        let configuration = """
            # A one-node test cluster on 127.0.0.1, written by ProvisionTestSupport.SlurmCluster.
            ClusterName=provisiontest
            SlurmctldHost=localhost(127.0.0.1)
            SlurmctldPort=\(controllerPort)
            SlurmdPort=\(nodePort)
            SlurmUser=root
            SlurmdUser=root
            AuthType=auth/munge
            CredType=cred/munge
            AuthInfo=socket=\(mungeSocket.path)
            MpiDefault=none
            ProctrackType=proctrack/linuxproc
            TaskPlugin=task/none
            JobAcctGatherType=jobacct_gather/none
            AccountingStorageType=accounting_storage/none
            JobCompType=jobcomp/none
            SelectType=select/cons_tres
            SelectTypeParameters=CR_Core
            SchedulerType=sched/backfill
            SchedulerParameters=sched_interval=1,bf_interval=1
            ReturnToService=2
            MinJobAge=600
            KillWait=5
            InactiveLimit=0
            MailProg=/bin/true
            StateSaveLocation=\(dir)/state
            SlurmdSpoolDir=\(dir)/spool
            SlurmctldPidFile=\(dir)/slurmctld.pid
            SlurmdPidFile=\(dir)/slurmd.pid
            SlurmctldLogFile=\(dir)/slurmctld.log
            SlurmdLogFile=\(dir)/slurmd.log
            SlurmctldDebug=info
            SlurmdDebug=info
            NodeName=\(nodeName) NodeAddr=127.0.0.1 \(hardware) State=UNKNOWN
            PartitionName=\(partition) Nodes=\(nodeName) Default=YES MaxTime=INFINITE State=UP

            """
        try Data(configuration.utf8).write(to: configurationFile)
    }

    private func startDaemon(_ name: String, _ arguments: [String]) throws {
        let output = directory.appendingPathComponent("\(name).stderr")
        let child = try ChildProcess(name: name, executable: try tool(name, sbin: true), arguments: arguments,
                                     environment: environment(), stdout: output, stderr: output)
        lock.lock()
        daemons.append(child)
        lock.unlock()
    }

    private func waitUntilIdle(deadline: Date) throws {
        var last = ""
        while Date() < deadline {
            try checkDaemonsRunning()
            let result = try client("sinfo", ["--noheader", "--nodes=\(nodeName)", "--format=%T"], timeout: 10)
            last = (result.stdout + result.stderr).trimmingCharacters(in: .whitespacesAndNewlines)
            if result.status == 0, last == "idle" { return }
            usleep(100_000)
        }
        throw SlurmError(description: "the node did not become idle in time (sinfo: \(last))\n\(logTails())")
    }

    private func checkDaemonsRunning() throws {
        lock.lock()
        let exited = daemons.compactMap { daemon in daemon.exitStatus().map { (daemon.name, $0) } }
        lock.unlock()
        guard let (name, status) = exited.first else { return }
        let stderr = (try? String(contentsOf: directory.appendingPathComponent("\(name).stderr"), encoding: .utf8)) ?? ""
        throw SlurmError(description: """
            \(name) exited with status \(status):
            \(stderr)
            \(logTails())
            """)
    }

    private func tool(_ name: String, sbin: Bool) throws -> URL {
        do {
            return try NginxTLSServer.tool(name, in: sbin ? ["/usr/sbin", "/usr/local/sbin", "/usr/bin"] : ["/usr/bin"])
        } catch {
            throw SlurmError(description: """
                \(name) is not installed (.ci/run installs it: apt-get install slurmctld slurmd slurm-client munge)
                """)
        }
    }

    private func runTool(_ executable: URL, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let output = directory.appendingPathComponent("tool-output.log")
        let child = try ChildProcess(name: executable.lastPathComponent, executable: executable, arguments: arguments,
                                     environment: environment(), stdout: output, stderr: output)
        guard let status = child.wait(timeout: 30) else {
            child.kill()
            throw SlurmError(description: "\(executable.lastPathComponent) \(arguments.joined(separator: " ")) did not finish in 30 s")
        }
        return (status, (try? String(contentsOf: output, encoding: .utf8)) ?? "")
    }
}

/// `kill(2)`, under a name the `kill()` method does not hide.
private func sendSignal(_ pid: pid_t, _ signal: Int32) -> Int32 {
    kill(pid, signal)
}

/// A child started with `posix_spawn`, stdin from /dev/null and stdout/stderr appended to files,
/// reaped only by `waitpid` on its own pid (see `SlurmCluster` for why not `Process`).
final class ChildProcess: @unchecked Sendable {
    /// A name for messages.
    let name: String
    /// The child's pid.
    let pid: pid_t
    private var status: Int32?
    private let lock = NSLock()

    #if canImport(Glibc)
    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+), which Swift's Glibc module
    /// does not declare; nil where the C library lacks it.
    private static let closeFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else {
            return nil
        }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()
    #endif

    /// Starts `executable arguments…` with exactly `environment`; `stdout` and `stderr` (which may
    /// be the same file) are created or truncated.
    init(name: String, executable: URL, arguments: [String], environment: [String: String],
         stdout: URL, stderr: URL) throws {
        self.name = name
        #if canImport(Glibc)
        var actions = posix_spawn_file_actions_t()
        #else
        var actions: posix_spawn_file_actions_t?
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        #if canImport(Glibc)
        // Nothing else of the test's: a daemon left behind must not hold the runner's pipes open.
        _ = Self.closeFrom?(&actions, 3)
        #endif
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        if stderr == stdout {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, stderr.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        }
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child: pid_t = 0
        let result = posix_spawn(&child, executable.path, &actions, nil, argv, envp)
        guard result == 0 else {
            throw SlurmCluster.SlurmError(description: "posix_spawn \(executable.path): \(String(cString: strerror(result)))")
        }
        pid = child
    }

    /// The exit status (128 + the signal for a killed child) once the child has ended, else nil.
    func exitStatus() -> Int32? {
        lock.lock()
        defer { lock.unlock() }
        if let status { return status }
        var raw: Int32 = 0
        let reaped = waitpid(pid, &raw, WNOHANG)
        guard reaped == pid else {
            if reaped < 0, errno == ECHILD { status = -1 }
            return status
        }
        let signal = raw & 0x7f
        status = signal == 0 ? (raw >> 8) & 0xff : 128 + signal
        return status
    }

    /// Polls for the child's end until `timeout` seconds from now; its status, or nil if it still runs.
    func wait(timeout: TimeInterval) -> Int32? {
        let end = Date().addingTimeInterval(timeout)
        while true {
            if let status = exitStatus() { return status }
            if Date() >= end { return nil }
            usleep(10_000)
        }
    }

    /// Sends `signal` to the child if it has not been reaped.
    func signal(_ signal: Int32) {
        if exitStatus() == nil { _ = sendSignal(pid, signal) }
    }

    /// SIGKILL, then waits (up to 10 s) for the child's end.
    func kill() {
        signal(SIGKILL)
        _ = wait(timeout: 10)
    }
}
