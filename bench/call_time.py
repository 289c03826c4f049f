"""Where a call's time went inside the daemon: sums the `scryer::call_time` events of a
daemon log (the daemon started with `SCRYER_LOG=scryer::call_time=debug`).

  python bench/call_time.py <run dir>/daemon.log [--load load.json]

Per tool call (`tool call` events): before the router (arguments, project, index state,
freshness), serving (the router call and its window fit), after (budget, notes), total.
Per router call (`router call` events): waiting for a blocking thread (queued),
instantiating, the router's own work, its host calls. With `--load` (load.py's JSON),
the client-seen percentiles are printed beside the daemon's: the difference is the stdio
relay, the socket and the client itself.
"""
import argparse, json, re

FIELD = re.compile(r"(\w+_us)=(\d+)")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def pct(xs, p):
    if not xs:
        return 0.0
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * (len(xs) - 1)))] / 1000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("log")
    ap.add_argument("--load")
    ap.add_argument("--out")
    a = ap.parse_args()
    tool, router = {}, {}
    for line in open(a.log, errors="replace"):
        line = ANSI.sub("", line)
        if "scryer::call_time" not in line:
            continue
        fields = {k: int(v) for k, v in FIELD.findall(line)}
        into = tool if "tool call" in line else router if "router call" in line else None
        if into is None:
            continue
        for k, v in fields.items():
            into.setdefault(k, []).append(v)
    res = {}
    for label, stages in (("tool calls", tool), ("router calls", router)):
        n = len(next(iter(stages.values()), []))
        print(f"{label}: {n}")
        print(f"  {'stage':<16} {'mean':>8} {'p50':>8} {'p95':>8} {'p99':>8}  (ms)   share of the sum of means")
        means = {k: sum(v) / len(v) / 1000 for k, v in stages.items()}
        parts = sum(m for k, m in means.items() if k != "total_us")
        for k, v in stages.items():
            share = "" if k == "total_us" else f"{100 * means[k] / parts:5.1f} %" if parts else ""
            print(f"  {k[:-3]:<16} {means[k]:8.2f} {pct(v, .5):8.2f} {pct(v, .95):8.2f} {pct(v, .99):8.2f}   {share}")
            res.setdefault(label, {})[k[:-3]] = {"mean": round(means[k], 3), "p50": pct(v, .5),
                                                  "p95": pct(v, .95), "p99": pct(v, .99)}
    if a.load:
        load = json.load(open(a.load))
        print(f"client-seen: p50 {load['p50_ms']} p95 {load['p95_ms']} p99 {load['p99_ms']} ms "
              f"({load['calls_per_s']} calls/s)")
        res["client"] = {k: load[k] for k in ("p50_ms", "p95_ms", "p99_ms", "calls_per_s")}
    if a.out:
        json.dump(res, open(a.out, "w"), indent=1)


if __name__ == "__main__":
    main()
