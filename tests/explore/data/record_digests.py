"""Digests of a fixed set of schedules: every example race (racy and fixed)
under fifo, random, pct and jitter seeds 1-3, and each run's replay schedule.

    python tests/explore/data/record_digests.py ROOT > schedule_digests-RELEASE.json

(ROOT: the checkout whose examples/ to use; run it with the tree to record
on the import path.) test_recorded_digests.py replays them."""
import importlib, json, sys, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, sys.argv[1] + "/examples")
import agentsim
from agentsim.explore import Schedule

def schedules(seed):
    return [f"{seed}:fifo", f"{seed}:random", f"{seed}:pct/3/40", f"{seed}:jitter"]

out = {}
for folder in ("races", "windows"):
    import os
    for name in sorted(os.listdir(f"{sys.argv[1]}/examples/{folder}")):
        if not name.endswith(".py") or name.startswith("_"): continue
        try:
            module = importlib.import_module(f"{folder}.{name[:-3]}")
        except Exception:
            continue
        for twin in ("racy", "fixed"):
            fn = getattr(module, twin)
            for seed in (1, 2, 3):
                for text in schedules(seed):
                    r = agentsim.replay(fn, schedule=text)
                    out[f"{folder}/{name[:-3]}::{twin} {text}"] = [r.trace.digest(), type(r.exception).__name__ if r.exception else None]
                    if r.trace.deviations:
                        s = Schedule(r.seed, "replay", r.trace.deviations, 1.0).encode()
                        r2 = agentsim.replay(fn, schedule=s)
                        out[f"{folder}/{name[:-3]}::{twin} {s}"] = [r2.trace.digest(), type(r2.exception).__name__ if r2.exception else None]
from importlib.metadata import version
print(json.dumps({"openai-agents": version("openai-agents"), "digests": out}, indent=0, sort_keys=True))
