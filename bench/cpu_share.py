"""Where the machine's CPU goes during a run: CPU seconds per process group (and per
thread name inside the daemon), sampled from /proc while another command runs.

  python bench/cpu_share.py --out F.json -- python ../shared/eval/load.py ...

Groups: the daemon (`daemon run`), the stdio relays (`scryer ... serve`), the command
itself and its children that are neither (the load clients), and everything else on the
machine (`other`). Processes are sampled every `--every` seconds; a process's CPU time
is counted from its first sample (or 0 when it started during the run) to its last, so a
short-lived process is missed by at most one interval. With 2 cores, the sum over
groups is at most 2 x the wall time.
"""
import argparse, json, os, subprocess, sys, time
from collections import defaultdict

TICK = os.sysconf("SC_CLK_TCK")


def cmdline(pid):
    try:
        return open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def cpu(path):
    try:
        fields = open(path).read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK
    except (OSError, IndexError, ValueError):
        return None


def comm(path):
    try:
        return open(path).read().strip()
    except OSError:
        return "?"


def group(pid, cmd, root):
    exe = cmd.split(" ", 1)[0].rsplit("/", 1)[-1]
    if exe.startswith("scryer") and " daemon run" in cmd:
        return "daemon"
    if exe.startswith("scryer") and " serve" in cmd:
        return "relays"
    p = pid
    for _ in range(6):
        try:
            p = int(open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
        if p == root:
            return "command"
    return "command" if pid == root else "other"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--every", type=float, default=0.5)
    ap.add_argument("--out")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    first, last, groups = {}, {}, {}
    threads_first, threads_last = {}, {}
    t0 = time.time()
    child = subprocess.Popen(command)
    while True:
        for pid in filter(str.isdigit, os.listdir("/proc")):
            pid = int(pid)
            c = cpu(f"/proc/{pid}/stat")
            if c is None:
                continue
            if pid not in first:
                # Present at the start: counted from here; started later: from 0.
                first[pid] = c if time.time() - t0 < a.every else 0.0
                groups[pid] = group(pid, cmdline(pid), child.pid)
            last[pid] = c
            if groups[pid] == "daemon":
                for tid in os.listdir(f"/proc/{pid}/task") if os.path.isdir(f"/proc/{pid}/task") else []:
                    tc = cpu(f"/proc/{pid}/task/{tid}/stat")
                    if tc is None:
                        continue
                    key = (pid, int(tid))
                    if key not in threads_first:
                        start = tc if time.time() - t0 < a.every else 0.0
                        threads_first[key] = (start, comm(f"/proc/{pid}/task/{tid}/comm"))
                    threads_last[key] = tc
        if child.poll() is not None:
            break
        time.sleep(a.every)
    wall = time.time() - t0
    per_group = defaultdict(float)
    for pid, c in last.items():
        per_group[groups[pid]] += c - first[pid]
    per_thread = defaultdict(float)
    for key, tc in threads_last.items():
        start, name = threads_first[key]
        # Worker threads are numbered: group them by name without the number.
        per_thread[name.rstrip("0123456789-")] += tc - start
    res = {
        "wall_s": round(wall, 1),
        "cpu_s": {g: round(v, 1) for g, v in sorted(per_group.items(), key=lambda x: -x[1])},
        "daemon_threads_cpu_s": {t: round(v, 1) for t, v in sorted(per_thread.items(), key=lambda x: -x[1]) if v >= 0.05},
        "exit": child.returncode,
    }
    print("cpu share:", json.dumps(res))
    if a.out:
        json.dump(res, open(a.out, "w"), indent=1)
    sys.exit(child.returncode)


if __name__ == "__main__":
    main()
