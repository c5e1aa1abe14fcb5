import ProvisionEngine
import ProvisionExport
import ProvisionStore

/// The commands, declared once: the parser, `--help` and the README's option tables read these.
public enum Commands {
    /// Every command, in the order the overview lists them.
    public static let all: [CommandSpec] = [validate, plan, apply, audit, sign, merge, export, search]

    /// The command named `name`.
    public static func named(_ name: String) -> CommandSpec? {
        all.first { $0.name == name }
    }

    /// `--store` of plan and apply.
    static let storeOption = Option<RunOptions>(OptionSpec(name: "--store", value: .text(placeholder: "DIR"),
                                        help: "The store directory (default: the job's \"store\", else ./store); a path to its offline.db names it too."),
                                                \.request.store)

    /// `--shard` and `--shard-count` of plan and apply (`--shard-count` reads `--shard`, declared before it).
    static let shardOptions = [
        Option<RunOptions>(OptionSpec(name: "--shard", value: .text(placeholder: "I/N|auto"),
                   help: "Only shard I of N (0 ≤ I < N): an equal share of the job's tiles, a contiguous range of the "
                       + "store's key order, into a partial store that 'provision merge' combines. auto reads I and "
                       + "N from the batch engine: JOB_COMPLETION_INDEX (Kubernetes Indexed Job; N from --shard-count or "
                       + "PROVISION_SHARD_COUNT), SLURM_ARRAY_TASK_ID − SLURM_ARRAY_TASK_MIN of SLURM_ARRAY_TASK_COUNT, "
                       + "or CI_NODE_INDEX of CI_NODE_TOTAL (GitLab parallel, 1-based). Needs SOURCE_DATE_EPOCH, the same "
                       + "for every shard and the merge (a plan saved by 'plan --shard' carries it).", example: "auto"),
                           set: RunOptions.setShard),
        Option(OptionSpec(name: "--shard-count", value: .text(placeholder: "N"),
                   help: "N for --shard auto where the engine does not say it (Kubernetes).", requires: ["--shard"], example: "4"),
               set: RunOptions.setShardCount),
    ]

    /// `--html FILE`, `--svg FILE`, `--zoom Z`: the coverage picture of a plan or an audit.
    static func coverageOptions(states: String) -> [Option<CoverageArguments>] {
        [
            Option(OptionSpec(name: "--html", value: .text(placeholder: "FILE"),
                       help: "Also write the coverage picture: one self-contained HTML page (inline SVG and CSS, nothing "
                           + "fetched, works from file://) with each region's outline and, per zoom, its tiles as cells: "
                           + "\(states). docs/coverage.md documents its markup.", example: "coverage.html"), \.html),
            Option(OptionSpec(name: "--svg", value: .text(placeholder: "FILE"),
                       help: "Also write the picture of one zoom (--zoom) as an SVG file.", requires: ["--zoom"],
                       example: "coverage.svg"), \.svg),
            Option(OptionSpec(name: "--zoom", value: .text(placeholder: "Z"), help: "The zoom --svg draws, 0–22.",
                       requires: ["--svg"], example: "14"), set: CoverageArguments.setZoom),
            Option(OptionSpec(name: "--graph-level", value: .text(placeholder: "N"),
                       help: "The level of the routing packs' graph tiles the pictures draw as outlined cells, 0–3 "
                           + "(default: the highest level the packs have).", example: "2"),
                   set: CoverageArguments.setGraphLevel),
        ]
    }

    /// `provision validate JOB…`.
    public static let validate = CommandSpec(
        name: "validate", positionals: .oneOrMore("JOB"),
        summary: "Check job files: syntax, types, unknown or duplicate keys, zooms, geometry, references.",
        discussion: """
        Checks each job file and reports every problem at once, each with the file, the JSON
        pointer of the offending value (/regions/2/zoom), what was expected and what was found.
        JOB may be - for standard input.
        """,
        options: Option<CommonOptions>.common().map { $0.within(\ValidateArguments.options) },
        exitCodes: [(.success, "every job is valid"), (.usage, "usage"), (.invalidJob, "a job is invalid"),
                    (.missingInput, "a job file cannot be read, or an origin archive or directory it names does not exist")])

    /// `provision plan JOB`.
    public static let plan = CommandSpec(
        name: "plan", positionals: .one("JOB"),
        summary: "Show what apply would add, remove and keep in the store. Downloads no tile.",
        discussion: """
        Resolves the job's style packs (fetching styles and TileJSONs, never tiles), computes the
        tile cover of every region and diffs it against the store: per region and zoom the tiles
        to add, remove and keep, per style pack the resources, with totals and a byte estimate.
        Writes nothing but --out. JOB may be - for standard input.
        """,
        options: [
            storeOption.within(\PlanArguments.run),
            Option(OptionSpec(name: "--detailed-exitcode", value: .flag,
                       help: "Exit 0 when there are no changes and 2 when there are (a style or TileJSON that "
                           + "changed upstream is a change).",
                       conflicts: ["--offline"]), \.detailedExitCode),
            Option(OptionSpec(name: "--refresh", value: .flag,
                       help: "Also count region content whose HTTP expiry has passed; it is a change that "
                           + "'apply --refresh' revalidates. Damaged rows count as downloads, as with --repair."), \.run.request.refresh),
            Option(OptionSpec(name: "--repair", value: .flag,
                       help: "Also re-read every stored row: rows that do not inflate, are not their kind, or whose "
                           + "chunk differs from the lock's digest are changes that 'apply --repair' fetches again; a damaged "
                           + "search pack is rebuilt."), \.run.request.repair),
            Option(OptionSpec(name: "--out", value: .text(placeholder: "FILE"),
                       help: "Save the plan; 'provision apply FILE' carries out exactly that plan, and refuses "
                           + "(exit 1) if the job file or the store changed since.",
                       conflicts: ["--offline"]), \.out),
            Option(OptionSpec(name: "--offline", value: .flag,
                       help: "Plan from the store's copies of the styles and TileJSONs, fetching nothing: upstream drift "
                           + "is not checked, which the text and the JSON (driftChecked: false) say. A document the store "
                           + "lacks is 69.",
                       conflicts: ["--detailed-exitcode", "--out"]), \.offline),
        ] + coverageOptions(states: "present, to add, to remove, shared").map { $0.within(\.coverage) } + [
            Option(OptionSpec(name: "--html-url", value: .text(placeholder: "URL"),
                       help: "Where CI publishes the --html file: the Markdown summary (--format markdown) links to it.",
                       requires: ["--html"], example: "https://ci.example.com/artifacts/coverage.html"), \.htmlURL),
        ] + shardOptions.map { $0.within(\.run) }
            + Option<CommonOptions>.common(format: OutputFormat.allCases.map(\.rawValue)).map { $0.within(\.options) },
        exitCodes: [(.success, "ok (with --detailed-exitcode: no changes)"), (.changesPresent, "changes present (--detailed-exitcode)"),
                    (.usage, "usage, a missing key or token, or --shard without SOURCE_DATE_EPOCH"),
                    (.invalidJob, "invalid job file, over the limits, or an unusable style or TileJSON"),
                    (.missingInput, "missing job file or origin archive"),
                    (.upstreamUnavailable, "a style or TileJSON cannot be fetched (a copy in the store does not do)"),
                    (.cannotWriteStore, "the store path is not a directory or too long, or an output cannot be written"),
                    (.failure, "other errors")])

    /// `provision apply JOB|PLAN`.
    public static let apply = CommandSpec(
        name: "apply", positionals: .one("JOB|PLAN"),
        summary: "Download what is missing and bring the store to the job's desired state.",
        discussion: """
        Given a job file, plans and then applies. Given a plan saved by 'plan --out', applies
        exactly that plan, after checking that neither the job file nor the store changed since.
        Downloads run in parallel (libcurl for http origins, direct reads for directory and
        MBTiles origins); every body is verified before it is written. The next offline.db is
        written beside the store in key order and moved into place atomically, then
        provision.lock.json; running plan right after reports no changes. Killed at any moment,
        the store stays as it was and the next apply takes back what was committed. The first
        SIGINT or SIGTERM stops new downloads, commits what arrived and exits 130 or 143.
        """,
        options: [
            storeOption.within(\ApplyArguments.run),
            Option(OptionSpec(name: "--refresh", value: .flag,
                       help: "Revalidate expired content with If-None-Match / If-Modified-Since: a 304 keeps the stored "
                           + "bytes, a 200 replaces them. Damaged rows are fetched again, never revalidated."), \.run.request.refresh),
            Option(OptionSpec(name: "--repair", value: .flag,
                       help: "Re-read every stored row first and fetch again every row that does not inflate, is not "
                           + "its kind, or whose chunk differs from the lock's digest, and rebuild every damaged search pack; "
                           + "afterwards 'audit --verify' passes."), \.run.request.repair),
            Option(OptionSpec(name: "--report", value: .text(placeholder: "FILE"),
                       help: "Also write the JSON report (Jobs/schema/report.schema.json) to FILE."), \.report),
            Option(OptionSpec(name: "--sign-key", value: .text(placeholder: "KEY.pem"),
                       help: "Sign the lock the apply writes, as 'provision sign' does, with this Ed25519 private key "
                           + "(\(keyFile)). It is read before planning: another kind of key is 64, a file that cannot be read 66. "
                           + "If signing fails, no earlier signature is left beside the new lock.", example: "/dev/fd/3"), \.signKey),
        ] + shardOptions.map { $0.within(\.run) } + Option<CommonOptions>.common().map { $0.within(\.options) },
        exitCodes: [(.success, "complete"), (.failure, "a stale saved plan, or other errors"),
                    (.usage, "usage, a missing key or token, --shard without SOURCE_DATE_EPOCH or unlike the plan's"),
                    (.invalidJob, "invalid job file, over the limits, or an unusable style or TileJSON"),
                    (.missingInput, "missing job file, origin archive or --sign-key file"),
                    (.upstreamUnavailable, "an origin is unavailable, or refused the key or token a request carried"),
                    (.cannotWriteStore, "the store or --report cannot be written, or the store path is too long"),
                    (.partial, "partial: some downloads failed; what was verified is kept, run apply again"),
                    (.interrupted, "stopped by SIGINT after committing what arrived (report status \"stopped\")"),
                    (.terminated, "stopped by SIGTERM after committing what arrived (report status \"stopped\")")])

    /// `provision audit`.
    public static let audit = CommandSpec(
        name: "audit", positionals: .none,
        summary: "Report what a store holds and whether it is whole.",
        discussion: """
        Reports the store's regions with their metadata, per-zoom tiles expected (from the lock)
        and present, resources, bytes, and SQLite's integrity check. Works on any MapLibre offline
        database, also one without a lock (pulled off a device or built by another tool): then it
        reports what is present.
        """,
        options: [
            Option(OptionSpec(name: "--store", value: .text(placeholder: "DIR"),
                       help: "The store directory (default: the store of --manifest's job, else ./store); a path to its offline.db names it too."),
                   \AuditArguments.store),
            Option(OptionSpec(name: "--verify", value: .flag,
                       help: "Re-read every tile and resource: inflate it, check it is plausible for its kind (MVT, "
                           + "PNG/JPEG/WebP, JSON, glyph PBF), count expired rows, and compare the content digest "
                           + "with the lock's, and offline.db's size and SHA-256 with the lock's files; for style packs "
                           + "with glyphs \"used\", also check that every label of every tile has its glyph ranges stored; "
                           + "with --manifest, also rebuild each search pack from the stored tiles (in a temporary "
                           + "directory) and compare it with the lock's."), \.verify),
            Option(OptionSpec(name: "--trusted-key", value: .text(placeholder: "PUB.pem"),
                       help: "With --verify, first check that \(StoreDirectory.signatureName) is this Ed25519 public key's "
                           + "signature of the lock's exact bytes (\(publicKeyFile)); a signature missing, or not the "
                           + "key's over the lock as it is, is exit 1 naming both files, and nothing else is checked. A "
                           + "private key is refused (64): verifiers get the public key.",
                       requires: ["--verify"], example: "pub.pem"), \.trustedKey),
            Option(OptionSpec(name: "--manifest", value: .text(placeholder: "JOB"),
                       help: "Also plan JOB against the store and report every difference."), \.manifest),
        ] + coverageOptions(states: "present, missing (where the lock expects a tile the store lacks), shared").map { $0.within(\.coverage) }
            + Option<CommonOptions>.common().map { $0.within(\.options) },
        exitCodes: [(.success, "no problem found (whole only with a readable lock; 'Not checked:' says the rest)"),
                    (.failure, "something is missing or broken, a region gets no tiles, or the signature does not match"),
                    (.usage, "usage, or a --trusted-key that is not an Ed25519 public key"),
                    (.invalidJob, "the --manifest job is invalid"),
                    (.missingInput, "no store there, no --manifest file, or a --trusted-key that cannot be read"),
                    (.upstreamUnavailable, "a style or TileJSON of the --manifest job cannot be fetched"),
                    (.cannotWriteStore, "--html or --svg cannot be written, or the store path is too long")])

    /// How a key file is given: PEM in a file or a file descriptor, never on the command line.
    static let keyFile = "PKCS#8 PEM, not encrypted, as 'openssl genpkey -algorithm ed25519' writes it; a path, or "
        + "/dev/fd/N for a descriptor the caller opened (3< KEY.pem, a secret store's pipe)"
    /// How a public key file is given.
    static let publicKeyFile = "SubjectPublicKeyInfo PEM, as 'openssl pkey -in KEY.pem -pubout' writes it; a path or /dev/fd/N"

    /// `provision sign --key KEY.pem`.
    public static let sign = CommandSpec(
        name: "sign", positionals: .none,
        summary: "Sign the store's lock with an Ed25519 key, so devices can check the bundle is the one built.",
        discussion: """
        Writes the Ed25519 signature of provision.lock.json's exact bytes beside it, as
        \(StoreDirectory.signatureName): 64 raw bytes, written atomically. The lock holds the digests
        of every row and search pack, so a signature that holds and digests that match mean every
        byte is the one built. 'openssl pkeyutl -verify -pubin -inkey PUB.pem
        -rawin -in provision.lock.json -sigfile \(StoreDirectory.signatureName)' checks it, as do
        CryptoKit, Tink and BouncyCastle (README: Signed bundles), and so does 'provision audit
        --verify --trusted-key PUB.pem'. The key is never printed; only its public key is shown.
        """,
        options: [
            Option(OptionSpec(name: "--store", value: .text(placeholder: "DIR"),
                              help: "The store directory (default: ./store); a path to its offline.db names it too."),
                   \SignArguments.store),
            Option(OptionSpec(name: "--key", value: .text(placeholder: "KEY.pem"),
                              help: "The Ed25519 private key (\(keyFile)). Required.",
                              example: "/dev/fd/3", whenMissing: "sign needs --key KEY.pem: the Ed25519 private key"), \.key),
        ] + Option<CommonOptions>.common().map { $0.within(\.options) },
        exitCodes: [(.success, "signed"), (.failure, "other errors"),
                    (.usage, "usage, or --key is not an unencrypted Ed25519 private key"),
                    (.invalidJob, "the store's lock cannot be read"),
                    (.missingInput, "no lock there, or --key cannot be read"),
                    (.cannotWriteStore, "the signature cannot be written, or an apply holds the store")])

    /// `provision merge STORE… --store OUT`.
    public static let merge = CommandSpec(
        name: "merge", positionals: .oneOrMore("STORE"),
        summary: "Join the stores of a sharded apply into the store of the whole job.",
        discussion: """
        Each STORE is the store of one 'apply --shard I/N' of the same job, in any order. The
        merged offline.db and provision.lock.json are byte for byte those one apply of the whole
        job writes (with the same SOURCE_DATE_EPOCH). Every input is checked first, and nothing
        is written when one is refused: a store that is not a shard, shards of different jobs or
        builds, a shard given twice or missing, an incomplete shard. Reads and writes one row at
        a time, so memory stays flat whatever the size. With --json, stdout carries the merged
        store's lock (Jobs/schema/lock.schema.json).

        When the inputs are files (MapLibre offline databases, such as a device's or one
        mbgl-offline wrote), they are merged into the existing store --store names by the rule
        devices use to side-load a bundle, in one transaction: a region whose definition and
        description equal a stored region's merges into it, else it is added; each of its tiles
        and resources is inserted when missing and replaces the stored row only when its
        'modified' is newer; its links are added. The store's lock gets its content fields
        recomputed. The next 'apply' of the job removes the regions the job does not list. With
        --json, stdout carries the merge-report (Jobs/schema/merge-report.schema.json).
        """,
        options: [
            Option(OptionSpec(name: "--store", value: .text(placeholder: "DIR"),
                       help: "The store to write (required; not one of the inputs): created when missing; its "
                           + "offline.db and lock are replaced. With database files: the existing store to merge them into.",
                       whenMissing: "merge needs --store DIR: the store to write"), \MergeArguments.store),
        ] + Option<CommonOptions>.common().map { $0.within(\.options) },
        exitCodes: [(.success, "merged"), (.failure, "other errors"),
                    (.usage, "usage, or --store is one of the inputs, or stores and database files are mixed"),
                    (.invalidJob, "not the finished shards of one apply, or a file is not a MapLibre offline database"),
                    (.missingInput, "an input does not exist, or (merging database files) --store holds no offline.db"),
                    (.cannotWriteStore, "--store cannot be written, or another run holds it")])

    /// `provision export --format mbtiles|pmtiles|bundle|patch --out FILE|DIR`.
    public static let export = CommandSpec(
        name: "export", positionals: .none,
        summary: "Write the store's tiles as MBTiles or PMTiles, a bundle apps and web pages open offline, or a patch for devices.",
        discussion: """
        Reads the store (never changes it) and writes, under a temporary name renamed into place:
        an MBTiles 1.3 archive ('tiles' a view over deduplicated 'map' and 'images' tables, TMS
        rows, metadata with name, format, bounds, center, zooms, attribution and the TileJSON's
        vector_layers), a PMTiles v3 archive (Hilbert order, deduplicated and run-length tiles,
        gzip directories with leaves, vector tiles gzip-compressed), or, with --format bundle, a
        directory: each style pack's style with its sources read from pmtiles:// archives and
        its sprites and glyphs from relative paths, one PMTiles archive a source, the sprites and
        glyph ranges, and a README.txt saying how MapLibre GL JS, Android and iOS load it. The
        same store gives the same bytes. A store with several sources needs --source NAME, or
        --out DIR for one archive a source; 'provision audit' lists the names. Bounds and center
        are the exported regions' extent clamped to the stored tiles.

        With --format patch --since OLD, writes a MapLibre offline database (schema 6) that a
        device holding the bundle of the store OLD side-loads (MapLibre's merge) to hold this
        store: every tile and resource that is new or whose bytes changed, with a 'modified'
        newer than OLD's; every region, unchanged ones with OLD's definition and description so
        devices merge into them, and a region whose definition or description changed with all
        its rows, as devices add it anew. A merge deletes nothing: the rows this store dropped
        stay on devices, and the result lists them with their bytes.
        """,
        options: [
            Option(OptionSpec(name: "--store", value: .text(placeholder: "DIR"),
                              help: "The store directory (default: ./store); a path to its offline.db names it too."),
                   \ExportArguments.store),
            Option(OptionSpec(name: "--format", value: .choice(placeholder: "FORMAT", choices: ExportRun.Format.allCases.map(\.rawValue)),
                       help: "What to write: mbtiles, pmtiles, bundle (a directory) or patch (an offline database "
                           + "updating the store --since names). Required.",
                       whenMissing: "export needs --format mbtiles, pmtiles, bundle or patch"), \.format),
            Option(OptionSpec(name: "--since", value: .text(placeholder: "DIR"),
                       help: "With --format patch (required there): the store devices have (its offline.db and lock), "
                           + "an older build of the same job; the patch holds what changed since.",
                       example: "releases/v1"), \.since),
            Option(OptionSpec(name: "--region", value: .text(placeholder: "ID"),
                       help: "Only the tiles of this job region (its id in the lock), and in a bundle only its style packs."), \.region),
            Option(OptionSpec(name: "--source", value: .text(placeholder: "NAME"),
                       help: "Only this source: a style source name, or the name audit lists for a region's tileset. "
                           + "Not with --format bundle.", example: "streets"), \.source),
            Option(OptionSpec(name: "--out", value: .text(placeholder: "FILE|DIR"),
                       help: "Where to write (required): a file, or a directory that gets one archive a source "
                           + "(NAME.mbtiles, NAME.pmtiles); the bundle's directory, replaced when it holds an earlier bundle; "
                           + "the patch file (not an input's).",
                       whenMissing: "export needs --out FILE or DIR: where to write"), \.out),
        ] + Option<CommonOptions>.common().map { $0.within(\.options) },
        exitCodes: [(.success, "exported"), (.failure, "other errors"),
                    (.usage, "usage, several sources but no --source or --out DIR, an unknown source or region"),
                    (.invalidJob, "nothing to export, a damaged tile or search pack; --since of another job, newer or "
                                  + "damaged; a patch row not newer"),
                    (.missingInput, "no store there, or --since names no store"),
                    (.cannotWriteStore, "--out cannot be written (no such directory, a full disk, not a bundle)")])

    /// `provision search QUERY`.
    public static let search = CommandSpec(
        name: "search", positionals: .one("QUERY"),
        summary: "Find places in the store's search packs, as an app offline asks them.",
        discussion: """
        Runs the query an app runs (docs/search-packs.md) on every search pack of the store
        (search/<pack>.db) and merges the answers in the same order: a place one of whose names is
        the query word for word first, then names of fewer words, places shown from a lower zoom,
        lower rank, and nearer --near. Every word of QUERY is a prefix ("hel" finds Helsinki);
        case and diacritics are folded ("hameentie" finds Hämeentie). Reads the packs only.
        """,
        options: [
            Option(OptionSpec(name: "--store", value: .text(placeholder: "DIR"),
                              help: "The store directory (default: ./store); a path to its offline.db names it too."),
                   \SearchArguments.store),
            Option(OptionSpec(name: "--near", value: .text(placeholder: "LON,LAT"),
                              help: "Where the user is: answers of equal standing come nearest first, and each shows its "
                                  + "distance.", example: "24.94,60.17"), set: SearchArguments.setNear),
            Option(OptionSpec(name: "--region", value: .text(placeholder: "ID"),
                              help: "Only places lying in this job region (its id)."), \.region),
            Option(OptionSpec(name: "--limit", value: .text(placeholder: "N"),
                              help: "The most answers, 1–1000 (default 10).", example: "20"), set: SearchArguments.setLimit),
        ] + Option<CommonOptions>.common(format: ["text", "json"]).map { $0.within(\.options) },
        exitCodes: [(.success, "searched (also when nothing matches)"), (.failure, "other errors"),
                    (.usage, "usage, or a query of no letter or digit"),
                    (.invalidJob, "a pack is damaged or not a search pack (named)"),
                    (.missingInput, "no store there, or it has no search packs")])
}
