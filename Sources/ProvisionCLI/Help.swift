/// The `--help` texts.
enum Help {
    static let version = "0.1.0"

    static func text(for topic: String?) -> String {
        switch topic {
        case "validate": return validate
        case "plan": return plan
        case "apply": return apply
        case "audit": return audit
        default: return overview
        }
    }

    static let overview = """
    provision \(version): build MapLibre Native offline databases from a declarative job file.

    USAGE: provision <command> [options]

    COMMANDS:
      validate JOB…   Check job files: syntax, types, unknown keys, zooms, geometry, references.
      plan JOB        Show what apply would add, remove and keep in the store. Downloads no tile.
      apply JOB       Download what is missing and bring the store to the job's desired state.
      audit           Report what a store holds and whether it is whole.

    A store is a directory holding offline.db (a MapLibre Native offline database, schema 6)
    and provision.lock.json. Results go to stdout (text, or JSON with --json); progress and
    logs go to stderr.

    EXIT CODES: 0 ok (plan: no changes), 2 changes present (plan --detailed-exitcode),
      64 usage, 65 invalid job file, 66 missing input, 69 upstream unavailable,
      73 cannot write store, 75 partial apply (retry later), 1 anything else.

    Run 'provision <command> --help' for a command's options.
    """

    static let validate = """
    USAGE: provision validate JOB… [--json]

    Checks each job file and reports every problem at once, each with the file, the JSON
    pointer of the offending value (/regions/2/zoom), what was expected and what was found.

    OPTIONS:
      --json        Print a JSON document ({"schemaVersion":1,"kind":"validation",…}).
      --quiet       Print nothing on success.

    EXIT CODES: 0 all valid, 65 a job is invalid, 66 a job file cannot be read, 64 usage.
    """

    static let plan = """
    USAGE: provision plan JOB [--store DIR] [--json | --format text|json|markdown] [--detailed-exitcode] [--refresh] [--repair] [--out FILE]

    Resolves the job's style packs (fetching styles and TileJSONs, never tiles), computes the
    tile cover of every region and diffs it against the store: per region and zoom the tiles
    to add, remove and keep, per style pack the resources, with totals and a byte estimate.
    Writes nothing.

    OPTIONS:
      --store DIR           The store directory (default: the job's "store", else ./store).
      --json                Same as --format json: a documented plan (Jobs/schema/plan.schema.json).
      --format FORMAT       text (default), json or markdown.
      --detailed-exitcode   Exit 0 when there are no changes and 2 when there are
                            (a style or TileJSON that changed upstream is a change).
      --refresh             Also count region content whose HTTP expiry has passed; it is a
                            change that 'apply --refresh' revalidates.
      --repair              Also re-read every stored row: rows that do not inflate, are not
                            their kind, or whose chunk differs from the lock's digest are
                            counted as changes that 'apply --repair' fetches again.
      --out FILE            Save the plan; 'provision apply FILE' carries out exactly that plan,
                            and refuses (exit 1) if the job file or the store changed since.
      --progress MODE       auto (default), json (NDJSON events on stderr) or none.
      --quiet               Only errors on stderr.

    EXIT CODES: 0 ok (no changes with --detailed-exitcode), 2 changes, 65 invalid job or over
      limits, 66 missing job file, 69 an origin is unavailable, 1 other errors.
    """

    static let apply = """
    USAGE: provision apply JOB|PLAN [--store DIR] [--report FILE] [--json] [--refresh] [--repair]

    Given a job file, plans and then applies. Given a plan saved by 'plan --out', applies
    exactly that plan, after checking that neither the job file nor the store changed since.
    Applying downloads what is missing with bounded parallelism (libcurl for http origins,
    direct reads for directory and MBTiles origins), verifies every body, and writes the next
    offline.db through one writer in batched transactions: regions, resources, then every tile
    the regions want, in key order as downloads arrive, with their links. Regions the job no
    longer has, and tiles no region uses, are left out. Then provision.lock.json is written.
    Running plan right after reports no changes.

    OPTIONS:
      --store DIR       The store directory (default: the job's "store", else ./store).
      --refresh         Revalidate expired content with If-None-Match / If-Modified-Since:
                        a 304 keeps the stored bytes untouched, a 200 replaces them.
                        Damaged rows (as with --repair) are fetched again, never revalidated.
      --repair          Re-read every stored row first and fetch again every row that does
                        not inflate, is not its kind, or whose chunk differs from the lock's
                        digest; afterwards 'audit --verify' passes.
      --report FILE     Also write the JSON report (Jobs/schema/report.schema.json) to FILE.
      --json            Print the JSON report on stdout instead of the text summary.
      --progress MODE   auto (default), json (NDJSON events on stderr) or none.
      --quiet           Only errors on stderr.

    The new offline.db (regions numbered in job order, content in key order) is written beside
    the store and moved into place atomically, so the same job and upstream bytes give the same
    bytes whatever the history; an apply with nothing to do leaves the store untouched. Killed
    at any moment, the store stays as it was; the next apply takes back what was committed.

    EXIT CODES: 0 complete, 1 stale saved plan, 65 invalid job or over limits, 66 missing job file,
      69 an origin is unavailable, 73 the store cannot be written, 75 partial (some downloads
      failed; what was verified is kept, run apply again), 1 other errors.
    """

    static let audit = """
    USAGE: provision audit [--store DIR] [--json] [--verify] [--manifest JOB]

    Reports the store's regions with their metadata, per-zoom tiles expected (from the lock)
    and present, resources, bytes, and SQLite's integrity check. Works on any MapLibre offline
    database, also one without a lock (pulled off a device or built by another tool): then it
    reports what is present.

    OPTIONS:
      --store DIR       The store directory (default ./store).
      --json            Print a JSON document (Jobs/schema/audit.schema.json).
      --verify          Re-read every tile and resource: inflate it, check it is plausible for
                        its kind (MVT, PNG/JPEG/WebP, JSON, glyph PBF), count expired and
                        orphaned rows, and compare the content digest with the lock's.
      --manifest JOB    Also plan JOB against the store and report every difference.

    EXIT CODES: 0 the store is whole, 1 something is missing or broken, 66 no store there.
    """
}
