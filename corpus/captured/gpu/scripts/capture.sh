# Shared set-up of the run_*.sh capture batches, sourced with the batch's log folder:
#   . "$(dirname "$0")/capture.sh" logs4
# Copies the capture scripts to /home/user/jobs and runs from there; `cap NAME SECONDS
# command...` runs one capture under `timeout`, its stdout+stderr into $LOGS/NAME.log, and notes
# its exit code and duration in $LOGS/_commands.txt.
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
JOBS=/home/user/jobs
mkdir -p $JOBS && cp "$SRC"/*.py $JOBS/ && cd $JOBS
LOGS=$OUT/$1; mkdir -p $LOGS
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
TORCHRUN=$(command -v torchrun || echo "python3 -m torch.distributed.run")
cap() {
  local name=$1 t=$2; shift 2
  local t0=$(date +%s)
  timeout -k 10 "$t" "$@" > "$LOGS/$name.log" 2>&1
  echo "$name rc=$? secs=$(( $(date +%s) - t0 )) :: $*" >> "$LOGS/_commands.txt"
}
