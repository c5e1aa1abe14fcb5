#!/usr/bin/env bash
# Submits a sharded apply to Slurm: an array of SHARD_COUNT shard tasks (shard.sbatch), then the
# merge (merge.sbatch) with --dependency=afterok on the whole array.
#
#   Examples/slurm/submit.sh JOB_FILE BUNDLE_DIR
#
# BUNDLE_DIR must be on a file system every node sees. Environment:
#   SHARD_COUNT        shards (default 7);   SHARD_LIMIT   at most this many at once (default 4)
#   SOURCE_DATE_EPOCH  default: now, printed, so a single-machine apply can reproduce the bytes
#   PROVISION          the provision binary (default: provision on PATH on the compute nodes)
#   SBATCH_PARTITION, SBATCH_ACCOUNT, …   read by sbatch itself
# Prints the two job ids; `squeue --me` shows them, and the logs are in BUNDLE_DIR/logs/.
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 JOB_FILE BUNDLE_DIR" >&2
  exit 64
fi
here=$(cd "$(dirname "$0")" && pwd)
JOB_FILE=$(realpath "$1")
BUNDLE=$(realpath -m "$2")
SHARD_COUNT=${SHARD_COUNT:-7}
SHARD_LIMIT=${SHARD_LIMIT:-4}
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(date +%s)}
export JOB_FILE BUNDLE SHARD_COUNT SOURCE_DATE_EPOCH
[ -n "${PROVISION:-}" ] && export PROVISION
mkdir -p "$BUNDLE/shards" "$BUNDLE/logs"   # sbatch does not create the directories of --output

# The whole environment goes with each job (--export=ALL, sbatch's default). Options given here
# override the #SBATCH lines of the scripts.
array=$(sbatch --parsable --export=ALL \
  --array="0-$((SHARD_COUNT - 1))%$SHARD_LIMIT" \
  --output="$BUNDLE/logs/shard-%A_%a.out" \
  "$here/shard.sbatch")
array=${array%%;*}   # --parsable prints "id" or "id;cluster"
merge=$(sbatch --parsable --export=ALL \
  --dependency="afterok:$array" --kill-on-invalid-dep=yes \
  --output="$BUNDLE/logs/merge-%j.out" \
  "$here/merge.sbatch")
merge=${merge%%;*}
echo "shards: job $array (tasks 0-$((SHARD_COUNT - 1)), at most $SHARD_LIMIT at once)"
echo "merge:  job $merge (after every shard succeeds) -> $BUNDLE/store"
echo "SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH"
