"""Checks that every variable `ddp-plan --json` promises for a node is what the tasks really got.
ddp-plan writes NONCE where srun's per-step nonce goes (the error file's directory): any 16 hex
digits match it.
usage: compare_plan.py PLAN.json ENV_DIR   (ENV_DIR/env.<RANK> holds each task's `env` output)"""
import json
import pathlib
import re
import sys


def same(promised, got):
    if got is None or "NONCE" not in promised:
        return promised == got
    pattern = re.escape(promised).replace("NONCE", "[0-9a-f]{16}")
    return re.fullmatch(pattern, got) is not None

plan = json.loads(pathlib.Path(sys.argv[1]).read_text())
env_dir = pathlib.Path(sys.argv[2])
checked = 0
for task in plan["tasks"]:
    lines = (env_dir / f"env.{task['rank']}").read_text().splitlines()
    got = dict(line.split("=", 1) for line in lines if "=" in line)
    for name, value in task["env"].items():
        if not same(value, got.get(name)):
            sys.exit(f"rank {task['rank']}: {name}: ddp-plan says {value!r}, task got {got.get(name)!r}")
        checked += 1
print(f"ddp-plan matches the tasks: {checked} variables over {len(plan['tasks'])} ranks")
