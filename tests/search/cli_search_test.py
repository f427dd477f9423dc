#!/usr/bin/env python3
"""End-to-end tests of `tailor search` over several traces, checkpoints and,
with `--mpi MPIRUN`, the island model across MPI ranks.

usage: cli_search_test.py TAILOR WL_A WL_B WORKDIR [--mpi MPIRUN | --no-mpi-build]

Records two tiny bundled workloads, then checks:
- the three tiers (--sample, --validate-sample, the whole trace): the found
  DMM's measure is what `tailor simulate` gives on the whole trace;
- several traces: the found DMM's aggregate is the mean (or the worst) of
  its per-trace fitness, and unreadable traces are errors naming the file;
- checkpoints: a search resumed from a checkpoint prints what the
  uninterrupted search prints; a mismatched or damaged checkpoint is an error
  naming the file and the field;
- --mpi: `mpirun -np 2 --oversubscribe tailor search` over two traces (each
  held by one rank) prints what one process prints; with `--islands 2` what
  `tailor search --islands 2` prints, twice the same; `mpirun -np 3
  --islands 3 --share-among 2` what `--islands 3` prints; a rank killed mid-run ends the job with a non-zero
  status and tailor's message naming the dead rank and the checkpoint, and
  the last checkpoint is whole (a search resumed from it in one process
  equals the uninterrupted one); `tailor` does not link libmpi, and a
  missing or broken MPI plugin is an error naming the file;
- --no-mpi-build: under a launcher's environment, a build without MPI says
  that it has none.
"""
import json
import os
import signal
import subprocess
import sys
import time

TAILOR, WL_A, WL_B, WORK = sys.argv[1:5]
MODE = sys.argv[5:]
os.makedirs(WORK, exist_ok=True)
A = os.path.join(WORK, "a.trace")
B = os.path.join(WORK, "b.trace")
SMALL = ["--population", "16", "--threads", "1", "--sample", "3000"]
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def run(args, env=None, ok=True):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, timeout=300)
    if ok and p.returncode != 0:
        print(" ".join(args), "\n", p.stderr, file=sys.stderr)
        raise SystemExit(f"{args[0]} failed with {p.returncode}")
    return p


def result(out):
    """The search's JSON without its timing and its work counter (a resumed
    or spread search simulates some allocators again)."""
    j = json.loads(out)
    for k in [k for k in j if k.endswith("seconds") or k.startswith("checkpoint_")] + ["allocator_simulations"]:
        j.pop(k)
    j.pop("sharing", None)  # where the processes' time went
    j.pop("ranks", None)    # each rank's memory and traces
    return j


for trace, wl, size in ((A, WL_A, "20"), (B, WL_B, "12")):
    if not os.path.exists(trace):
        run([TAILOR, "record", "-q", "-o", trace, "--", wl, "--size", size])

if not MODE:
    # Several traces, mean and worst.
    for how in ("mean", "worst"):
        j = json.loads(run([TAILOR, "search", A, B, "--json", "--generations", "4", "--aggregate", how] + SMALL).stdout)
        found = [t["normalized_to_kng"][-1]["fitness"] for t in j["traces"]]
        agg = j["normalized_to_kng"][-1]["fitness"]
        want = sum(found) / 2 if how == "mean" else max(found)
        check(j["aggregate"] == how and len(found) == 2 and abs(agg - want) < 1e-12,
              f"--aggregate {how}: found {agg} is the {how} of the traces' {found}")
        kng = j["normalized_to_kng"][0]
        check(kng["dmm"] == "kng" and kng["fitness"] == 1.0, f"--aggregate {how}: Kingsley aggregates to 1")
    # Three tiers: ranked on a sample, candidates measured on a larger one,
    # the found DMM measured on the whole trace (what tailor simulate says).
    found_spec = os.path.join(WORK, "found.json")
    j = json.loads(run([TAILOR, "search", A, "--json", "--generations", "4", "--population", "16", "--threads", "1",
                        "--sample", "3000", "--validate-sample", "20000", "-o", found_spec]).stdout)
    ranked, validated = j["sample"]["operations"], j["validation_sample"]["operations"]
    head = j["validation_sample"]["prefix_operations"]
    check(ranked <= 3000 < validated <= 10000 and head == 10000 and j["validation_sample"]["one_in"] > 1,
          f"--validate-sample 20000: ranked on {ranked}, candidates measured on a sample of {validated} "
          f"operations and on the first {head}")
    sim = json.loads(run([TAILOR, "simulate", A, "--json", "--dmm", found_spec]).stdout)["dmms"][0]
    found = j["normalized_to_kng"][-1]
    check(found["steps"] == sim["steps"] and found["memory_usage_bytes"] == sim["memory_usage_bytes"],
          f"the found DMM's measure is the whole trace's: search {found['steps']} steps {found['memory_usage_bytes']} B, "
          f"simulate {sim['steps']} steps {sim['memory_usage_bytes']} B")
    j0 = json.loads(run([TAILOR, "search", A, "--json", "--generations", "4", "--population", "16", "--threads", "1",
                         "--sample", "3000", "--validate-sample", "0"]).stdout)
    check(j0["validation_sample"]["one_in"] == 1, "--validate-sample 0: candidates measured on the whole trace")

    missing = os.path.join(WORK, "missing.trace")
    p = run([TAILOR, "search", A, missing] + SMALL, ok=False)
    check(p.returncode == 1 and missing in p.stderr and "Traceback" not in p.stderr,
          f"a missing trace is an error naming it: {p.stderr.strip()}")
    garbage = os.path.join(WORK, "garbage.trace")
    with open(garbage, "wb") as f:
        f.write(b"not a trace at all" * 10)
    p = run([TAILOR, "search", garbage, A] + SMALL, ok=False)
    check(p.returncode == 1 and garbage in p.stderr, f"an unreadable trace is an error naming it: {p.stderr.strip()}")

    # Checkpoints: resume equals the uninterrupted search.
    ck = os.path.join(WORK, "ck.json")
    common = [TAILOR, "search", A, B, "--json", "--islands", "2", "--migrate-every", "2"] + SMALL
    full = result(run(common + ["--generations", "7"]).stdout)
    if os.path.exists(ck):
        os.remove(ck)
    run(common + ["--generations", "5", "--checkpoint", ck, "--checkpoint-every", "2"])
    check(json.load(open(ck))["generation"] == 4, "the checkpoint is the last multiple of --checkpoint-every")
    resumed = result(run(common + ["--generations", "7", "--resume", ck]).stdout)
    check(resumed == full, "a resumed search prints what the uninterrupted one prints")
    p = run(common + ["--generations", "7", "--resume", ck, "--seed", "2"], ok=False)
    check(p.returncode == 1 and f"{ck}: field 'settings.seed'" in p.stderr, f"mismatched resume: {p.stderr.strip()}")
    p = run([TAILOR, "search", A, "--json", "--islands", "2", "--migrate-every", "2", "--generations", "7",
             "--resume", ck] + SMALL, ok=False)
    check(p.returncode == 1 and f"{ck}: field 'settings.traces'" in p.stderr, f"other traces: {p.stderr.strip()}")
    damaged = os.path.join(WORK, "damaged.json")
    with open(ck) as f, open(damaged, "w") as g:
        g.write(f.read()[:500])
    p = run(common + ["--generations", "7", "--resume", damaged], ok=False)
    check(p.returncode == 1 and f"{damaged}: not a checkpoint" in p.stderr, f"damaged checkpoint: {p.stderr.strip()}")

elif MODE[0] == "--no-mpi-build":
    env = dict(os.environ, OMPI_COMM_WORLD_SIZE="2")
    p = run([TAILOR, "search", A] + SMALL, env=env, ok=False)
    check(p.returncode == 1 and "built without MPI" in p.stderr, f"a build without MPI says so: {p.stderr.strip()}")

elif MODE[0] == "--mpi":
    mpirun = MODE[1]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")
    launch = [mpirun, "-np", "2", "--oversubscribe"]
    args = ["search", A, B, "--json", "--generations", "6", "--migrate-every", "2"] + SMALL
    local = result(run([TAILOR] + args + ["--islands", "2"]).stdout)
    first = result(run(launch + [TAILOR] + args + ["--islands", "2"], env=env).stdout)
    second = result(run(launch + [TAILOR] + args + ["--islands", "2"], env=env).stdout)
    check(first == local, "mpirun -np 2 --islands 2 prints what --islands 2 prints in one process")
    check(first == second, "mpirun -np 2 twice: the same result")
    alone = result(run([TAILOR] + args).stdout)
    shared = result(run(launch + [TAILOR] + args, env=env).stdout)
    check(shared == alone, "mpirun -np 2 (one population, its evaluations shared out) prints what one process prints")
    ranks = json.loads(run(launch + [TAILOR] + args, env=env).stdout)["ranks"]
    check([k["rank"] for k in ranks] == [0, 1] and sorted(t for k in ranks for t in k["traces"]) == sorted([A, B]) and
          all(len(k["traces"]) == 1 and k["peak_rss_bytes"] > 1 << 20 for k in ranks),
          f"two traces on two ranks: each rank loads one, and reports its peak RSS: {ranks}")
    three = result(run([mpirun, "-np", "3", "--oversubscribe", TAILOR] + args + ["--islands", "3", "--share-among", "2"],
                       env=env).stdout)
    check(three == result(run([TAILOR] + args + ["--islands", "3"]).stdout),
          "mpirun -np 3 --share-among 2 (a group of two ranks and one alone) prints what --islands 3 prints")

    # MPI is a plugin that only a rank loads (src/search/mpi_job.h): tailor
    # itself does not link libmpi, and a plugin that is missing or not a
    # library is an error naming the file and the variable that overrides it.
    needed = run(["readelf", "-d", TAILOR]).stdout
    check("libmpi" not in needed, "tailor does not link libmpi (it loads the MPI plugin under mpirun only)")
    rank_env = dict(env, OMPI_COMM_WORLD_SIZE="2")
    missing = os.path.join(WORK, "no-such-plugin.so")
    p = run([TAILOR, "search", A] + SMALL, env=dict(rank_env, TAILOR_MPI_LIB=missing), ok=False)
    check(p.returncode == 1 and f"TAILOR_MPI_LIB={missing}: no such file" in p.stderr,
          f"a missing MPI plugin is an error naming it: {p.stderr.strip()}")
    not_a_plugin = os.path.join(WORK, "not-a-plugin.so")
    with open(not_a_plugin, "w") as f:
        f.write("not a library\n")
    p = run([TAILOR, "search", A] + SMALL, env=dict(rank_env, TAILOR_MPI_LIB=not_a_plugin), ok=False)
    check(p.returncode == 1 and f"cannot load the MPI plugin {not_a_plugin}" in p.stderr and "Traceback" not in p.stderr,
          f"a file that is not the plugin is an error naming it: {p.stderr.strip()}")

    # A rank that dies: the job ends, the message names it, the checkpoint is whole.
    ck = os.path.join(WORK, "mpi-ck.json")
    if os.path.exists(ck):
        os.remove(ck)
    mark = f"tailor-mpi-test-{os.getpid()}"
    long_run = launch + ["-x", "TAILOR_TEST_MARK", TAILOR, "search", A, B, "--generations", "100000",
                         "--migrate-every", "2", "--checkpoint", ck, "--checkpoint-every", "1"] + SMALL
    job = subprocess.Popen(long_run, env=dict(env, TAILOR_TEST_MARK=mark), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while not os.path.exists(ck) and time.time() < deadline and job.poll() is None:
        time.sleep(0.1)
    victim = None
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            environ = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
        except OSError:
            continue
        if f"TAILOR_TEST_MARK={mark}".encode() in environ and b"OMPI_COMM_WORLD_RANK=1" in environ:
            victim = int(pid)
    check(victim is not None, "rank 1 found while the job runs")
    if victim is not None:
        os.kill(victim, signal.SIGKILL)
    try:
        out, err = job.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        job.kill()
        out, err = job.communicate()
    check(job.returncode != 0, f"the job ends with a non-zero status ({job.returncode})")
    words = " ".join(err.split())
    check(f"tailor: rank 0: the job is ending: rank 1 (pid {victim}) ended" in words and
          f"the search resumes from its last checkpoint, {ck} (generation" in words and f"--resume {ck}" in words,
          "tailor's message names the dead rank and the checkpoint: " + words[-600:])
    saved = json.load(open(ck))  # whole: it parses
    g = saved["generation"]
    check(g >= 1 and len(saved["islands"]) == 1, f"the last checkpoint is whole (generation {g}, 1 island)")
    one = [TAILOR, "search", A, B, "--json", "--migrate-every", "2"] + SMALL
    check(result(run(one + ["--generations", str(g + 2), "--resume", ck]).stdout) ==
          result(run(one + ["--generations", str(g + 2)]).stdout),
          "the dead job's checkpoint resumes in one process to the uninterrupted result")

if failures:
    print(f"{len(failures)} check(s) failed", file=sys.stderr)
    sys.exit(1)
