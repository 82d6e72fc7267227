#!/bin/bash
# Every variable torchrun's agent gives a worker is on every task of srun --ddp, with torchrun's
# meaning, and torch.distributed.is_torchelastic_launched() is True there (Python tasks, as user
# nobody). The list is read from the installed torch's own source (local_elastic_agent.py,
# _start_workers) and, for the version the issue was measured with, kept here:
#   torch 2.6.0: LOCAL_RANK RANK GROUP_RANK ROLE_RANK ROLE_NAME LOCAL_WORLD_SIZE WORLD_SIZE
#     GROUP_WORLD_SIZE ROLE_WORLD_SIZE MASTER_ADDR MASTER_PORT TORCHELASTIC_RESTART_COUNT
#     TORCHELASTIC_MAX_RESTARTS TORCHELASTIC_RUN_ID TORCHELASTIC_USE_AGENT_STORE
#     TORCH_NCCL_ASYNC_ERROR_HANDLING (+ OMP_NUM_THREADS when the agent has it; start_processes
#     adds TORCHELASTIC_ERROR_FILE; torch 1.13 names the NCCL switch NCCL_ASYNC_ERROR_HANDLING)
# All but TORCHELASTIC_USE_AGENT_STORE: no agent serves a store here, and it is removed even
# when the job's environment has it. A value the user set for ROLE_NAME wins.
source "$(dirname "$0")/testlib.sh"
"$PYTHON" -c "import torch.distributed.elastic.agent.server.local_elastic_agent" 2>/dev/null ||
  { echo "SKIP: python3-torch missing"; exit 77; }
id nobody >/dev/null 2>&1 || { echo "SKIP: no user nobody"; exit 77; }
OUT=$WORK/out
mkdir -p "$OUT"
chown nobody:"$(id -gn nobody)" "$OUT"
as_user() { (cd "$OUT" && "$RUN" setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"); }

step() {  # step NAME EXTRA_EXPORTS: the four tasks' JSON lines
  mkdir -p "$OUT/$1"
  chown nobody "$OUT/$1"
  as_user timeout 120 srun --ddp -N2 --ntasks-per-node=2 --export=ALL$2 \
    "$PYTHON" "$PROGRAMS/torchrun_env.py" "$OUT/$1" >&2 || fail "step $1 failed"
  cat "$OUT/$1"/env-*.json
}
plain=$(step plain "")
mine=$(step mine ",TORCHELASTIC_USE_AGENT_STORE=True,ROLE_NAME=trainer")
"$PYTHON" - "$plain" "$mine" <<'CHECK' || fail "the contract differs from torchrun's (above)"
import json, sys
KEPT_2_6 = """LOCAL_RANK RANK GROUP_RANK ROLE_RANK ROLE_NAME LOCAL_WORLD_SIZE WORLD_SIZE GROUP_WORLD_SIZE
ROLE_WORLD_SIZE MASTER_ADDR MASTER_PORT TORCHELASTIC_RESTART_COUNT TORCHELASTIC_MAX_RESTARTS
TORCHELASTIC_RUN_ID TORCHELASTIC_USE_AGENT_STORE TORCH_NCCL_ASYNC_ERROR_HANDLING""".split()
NOT_HERE = {"TORCHELASTIC_USE_AGENT_STORE"}
problems = []
def check(ok, what):
    if not ok:
        problems.append(what)
plain = [json.loads(l) for l in sys.argv[1].splitlines()]
mine = [json.loads(l) for l in sys.argv[2].splitlines()]
check(len(plain) == 4 and len(mine) == 4, f"expected 4 tasks, got {len(plain)} and {len(mine)}")
for t in plain + mine:
    env = t["env"]
    wanted = (set(t["agent_variables"]) | set(KEPT_2_6) |
              {"TORCHELASTIC_ERROR_FILE", "NCCL_ASYNC_ERROR_HANDLING"}) - NOT_HERE
    missing = sorted(n for n in wanted if not env.get(n))
    check(not missing, f"rank {env.get('RANK')} (torch {t['torch']}) lacks {missing}")
    check(env.get("TORCHELASTIC_USE_AGENT_STORE") is None, f"rank {env.get('RANK')} has TORCHELASTIC_USE_AGENT_STORE")
    check(t["is_torchelastic_launched"], f"rank {env.get('RANK')}: is_torchelastic_launched() is False")
    check(env["ROLE_RANK"] == env["RANK"] and env["ROLE_WORLD_SIZE"] == env["WORLD_SIZE"] == "4",
          f"rank {env['RANK']}: ROLE_RANK/ROLE_WORLD_SIZE")
    check(env["GROUP_WORLD_SIZE"] == "2" and env["GROUP_RANK"] == str(int(env["RANK"]) // 2),
          f"rank {env['RANK']}: GROUP_WORLD_SIZE/GROUP_RANK")
    check(env["TORCHELASTIC_RESTART_COUNT"] == "0" and env["TORCHELASTIC_MAX_RESTARTS"] == "0",
          f"rank {env['RANK']}: restarts")
    check(env["TORCH_NCCL_ASYNC_ERROR_HANDLING"] == "1" and env["NCCL_ASYNC_ERROR_HANDLING"] == "1",
          f"rank {env['RANK']}: NCCL async error handling")
    check(env["TORCHELASTIC_ERROR_FILE"].endswith(f"/rank-{env['RANK']}.json") and
          t["error_dir_mode"] == "0o700" and t["error_dir_owner_is_me"],
          f"rank {env['RANK']}: error file {env['TORCHELASTIC_ERROR_FILE']} in a dir {t['error_dir_mode']}")
for tasks, role in ((plain, "default"), (mine, "trainer")):
    check(len({t["env"]["TORCHELASTIC_RUN_ID"] for t in tasks}) == 1, "one run id per step")
    check(len({t["env"]["TORCHELASTIC_ERROR_FILE"] for t in tasks}) == 4, "one error file per rank")
    check(all(t["env"]["ROLE_NAME"] == role for t in tasks), f"ROLE_NAME {role}")
check(plain[0]["env"]["TORCHELASTIC_RUN_ID"] != mine[0]["env"]["TORCHELASTIC_RUN_ID"],
      "two steps share a run id")
print(f"torch {plain[0]['torch']}: agent variables {' '.join(plain[0]['agent_variables'])}")
for p in problems:
    print("problem:", p)
sys.exit(1 if problems else 0)
CHECK
# Nothing of the watch's token reaches a task.
leak=$(as_user srun --ddp -N1 -n1 env | grep -c 'SLURM_SPANK_DDP_WATCH\|DDP_WATCH_KEY' || true)
[ "$leak" = 0 ] || fail "the watch's token reached a task"
echo "PASS: torchrun's worker contract on every task, is_torchelastic_launched() True"
