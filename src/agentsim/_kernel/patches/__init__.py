"""What the kernel patches while a simulation runs, and why: determinism
(wall clock, randomness, uuids, ordered sets), escapes (real I/O, threads,
processes, signals), thread offload run inline, forgotten awaits."""
