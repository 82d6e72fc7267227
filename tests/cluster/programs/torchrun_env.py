"""Prints, as one JSON line, what a task of srun --ddp has of torchrun's worker contract: the
variables torchrun's agent would set (read from the installed torch's own source,
local_elastic_agent.py, _start_workers), their values here, the error file's directory, and
torch.distributed.is_torchelastic_launched(). With a directory argument, into DIR/env-RANK.json."""
import ast
import inspect
import json
import os
import stat
import sys

import torch
import torch.distributed as dist
from torch.distributed.elastic.agent.server import local_elastic_agent


def agent_variables():
    """The keys of `worker_env` that LocalElasticAgent._start_workers (and, in newer torch,
    _set_local_rank_env) always sets, as this torch writes them: those of the dict literal, and of
    any worker_env[...] = ... that no `if` guards (OMP_NUM_THREADS and CUDA_VISIBLE_DEVICES are
    passed on only when the agent has them)."""
    tree = ast.parse(inspect.getsource(local_elastic_agent))
    names = set()

    def visit(statements):
        for node in statements:
            if isinstance(node, ast.If):
                continue
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Name) and t.id == "worker_env" and isinstance(node.value, ast.Dict):
                        names.update(k.value for k in node.value.keys if isinstance(k, ast.Constant))
                    if (isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and
                            t.value.id == "worker_env" and isinstance(t.slice, ast.Constant)):
                        names.add(t.slice.value)
            for field in ("body", "orelse", "finalbody"):
                if isinstance(node, (ast.For, ast.While, ast.With, ast.Try)) and hasattr(node, field):
                    visit(getattr(node, field))

    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef) and fn.name in ("_start_workers", "_set_local_rank_env"):
            visit(fn.body)
    return sorted(names)


names = agent_variables()
error_file = os.environ.get("TORCHELASTIC_ERROR_FILE", "")
mode = None
if error_file:
    st = os.stat(os.path.dirname(error_file))
    mode = oct(stat.S_IMODE(st.st_mode))
line = json.dumps({
    "torch": torch.__version__,
    "agent_variables": names,
    "env": {n: os.environ.get(n) for n in names + ["TORCHELASTIC_ERROR_FILE", "NCCL_ASYNC_ERROR_HANDLING",
                                                   "TORCH_NCCL_ASYNC_ERROR_HANDLING", "GROUP_RANK",
                                                   "DDP_WATCH"]},
    "error_dir_mode": mode,
    "error_dir_owner_is_me": bool(error_file) and os.stat(os.path.dirname(error_file)).st_uid == os.getuid(),
    "is_torchelastic_launched": dist.is_torchelastic_launched(),
}, sort_keys=True)
# One file per rank in the directory given, else stdout.
if len(sys.argv) > 1:
    with open(os.path.join(sys.argv[1], f"env-{os.environ['RANK']}.json"), "w") as f:
        f.write(line + "\n")
else:
    print(line, flush=True)
