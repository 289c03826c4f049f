#!/usr/bin/env python3
"""Read-tool latency over every definition of an indexed project, through a real MCP client.

  python bench/latency.py --bin target/release/scryer --root ~/corpus/tokio
  python bench/latency.py --bin NEW --vs OLD --root ~/corpus/tokio --answers /tmp/ans
  python bench/latency.py --bin BIN --vs-env SCRYER_DB_CACHE_MIB=8 --root ~/corpus/tokio
  python bench/latency.py --bin BIN --vs-env SCRYER_PRECISE=auto --root ~/corpus/tokio

Starts `scryer --db <tmp>/<label>.db serve` over stdio with the official MCP Python SDK
(`pip install mcp`; the shared eval's venv has it), which starts or joins the daemon for
that database, indexes --root with index_workspace and waits until get_indexing_status
says ready. It then calls get_file_outline on every source file (that pass also lists
the definitions), and for a seeded sample of --sample definitions (functions, methods,
types, traits, constants, statics, macros, type aliases) plus the --top names that occur
most often in the code (the common, ambiguous ones a tuned list under-samples):
find_references with each view (callers, files, sites), inspect_symbol,
resolve_definition, trace_call_hierarchy and search_symbols (the name as the query).

Times are wall time per call in the client. Prints p50/p95/p99/max per tool (and per
find_references view) and the ten slowest calls. With --vs, a second binary runs beside
the first on its own database and daemon, and every call goes to both, alternating which
goes first, so the two columns share the machine's noise; --env and --vs-env set
variables for one side (a lever switched by a variable is measured with one binary).
--answers DIR writes every
answer (one JSON line per call) per binary, to check that a change kept answers
byte-identical. Not a test: nothing here asserts a time.
"""
import argparse
import asyncio
import collections
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

# Outline kinds that are definitions a user asks about (fields and variants are members).
KINDS = {"function", "method", "struct", "enum", "trait", "const", "static", "type_alias",
         "macro", "union", "class", "interface"}
VIEWS = ("callers", "files", "sites")
SKIP_DIRS = {"target", "node_modules", ".git"}
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class Server:
    """One `scryer serve` session (joined to its daemon) with a per-call timer."""

    def __init__(self, label, binary, db, env, root):
        self.label, self.binary, self.db, self.env, self.root = label, binary, db, env, root
        self.stack, self.session = AsyncExitStack(), None
        self.answers = None

    async def start(self, cwd):
        params = StdioServerParameters(command=self.binary, args=["--db", self.db, "serve"],
                                       env=self.env, cwd=cwd)
        r, w = await self.stack.enter_async_context(stdio_client(params, errlog=sys.stderr))
        self.session = await self.stack.enter_async_context(ClientSession(r, w))
        await asyncio.wait_for(self.session.initialize(), 120)

    async def call(self, tool, args, timeout=300):
        t = time.perf_counter()
        res = await asyncio.wait_for(self.session.call_tool(tool, args), timeout)
        ms = (time.perf_counter() - t) * 1000
        text = "\n".join(getattr(c, "text", "") for c in res.content)
        if self.answers:
            self.answers.write(json.dumps({"tool": tool, "args": args, "error": bool(res.is_error),
                                           "text": text}) + "\n")
        return ms, text, bool(res.is_error)

    async def index(self):
        t = time.monotonic()
        _, text, err = await self.call("index_workspace", {"path": self.root}, timeout=1800)
        if err:
            raise SystemExit(f"{self.label}: index_workspace failed: {text[:300]}")
        while time.monotonic() - t < 1800:
            _, text, _ = await self.call("get_indexing_status", {"project": self.root})
            try:
                status = json.loads(text)
                precise = (status.get("precise") or {}).get("state")
                # With precise mode on, the answers measured are the precise ones: wait
                # until the SCIP stage has settled (ready, failed, unavailable or off).
                waiting = self.env.get("SCRYER_PRECISE") != "off" and precise in (
                    "pending", "running")
                if status.get("state") == "ready" and not waiting:
                    return time.monotonic() - t
            except ValueError:
                pass
            await asyncio.sleep(0.5)
        raise SystemExit(f"{self.label}: not ready (or precise not settled) after 30 min: {text[:300]}")

    async def stop(self):
        await self.stack.aclose()
        subprocess.run([self.binary, "--db", self.db, "daemon", "stop"], env=self.env,
                       capture_output=True, timeout=60)


def source_files(root, exts):
    out = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and not x.startswith("."))
        out += [os.path.join(d, f) for f in sorted(files) if f.endswith(exts)]
    return out


def definitions(outline, path):
    """(symbol, name, kind, path) of every definition in one get_file_outline answer."""
    out = []

    def walk(items, container):
        for it in items or []:
            name, kind = it.get("name"), it.get("kind")
            if name and kind in KINDS:
                out.append((f"{container}::{name}" if container else name, name, kind, path))
            walk(it.get("children"), name if kind not in ("module",) else container)

    walk(outline.get("symbols"), None)
    return out


def most_frequent(files, names, top):
    counts = collections.Counter()
    for f in files:
        with open(f, encoding="utf-8", errors="replace") as fh:
            counts.update(m for m in IDENT.findall(fh.read()) if m in names)
    return [n for n, _ in counts.most_common(top)]


def plan(defs, top_names, sample, seed, root):
    rng = random.Random(seed)
    picked = rng.sample(defs, min(sample, len(defs)))
    calls = []
    targets = [(d[0], d[3]) for d in picked] + [(n, None) for n in top_names]
    for symbol, _path in targets:
        for view in VIEWS:
            calls.append((f"find_references/{view}", "find_references", {"symbol": symbol, "view": view}))
        calls.append(("inspect_symbol", "inspect_symbol", {"symbol": symbol}))
        calls.append(("resolve_definition", "resolve_definition", {"symbol": symbol}))
        calls.append(("trace_call_hierarchy", "trace_call_hierarchy", {"symbol": symbol}))
        calls.append(("search_symbols", "search_symbols", {"query": symbol.split("::")[-1]}))
    for c in calls:
        c[2]["project"] = root
    return calls


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))] if xs else float("nan")


def report(results, labels):
    by = collections.defaultdict(lambda: collections.defaultdict(list))
    for r in results:
        for lab in labels:
            by[r["key"]][lab].append(r[lab])
    head = f"{'tool':32} {'n':>5} " + " ".join(
        f"{lab[:10]:>10} p50 {'p95':>6} {'p99':>6} {'max':>7}" for lab in labels)
    print(head)
    for key in sorted(by):
        row = f"{key:32} {len(by[key][labels[0]]):5d} "
        for lab in labels:
            xs = by[key][lab]
            row += f"{'':>10} {pct(xs, 50):5.1f} {pct(xs, 95):6.1f} {pct(xs, 99):6.1f} {max(xs):7.1f} "
        print(row)
    for lab in labels:
        print(f"\nslowest ten calls, {lab}:")
        for r in sorted(results, key=lambda r: -r[lab])[:10]:
            other = "".join(f" ({o} {r[o]:.1f} ms)" for o in labels if o != lab)
            print(f"  {r[lab]:8.1f} ms{other} {r['tool']} {json.dumps(r['args'], sort_keys=True)}"
                  f" -> {r['chars']} chars{' ERROR' if r['error'] else ''}")
    summary = {key: {lab: {"p50": pct(v, 50), "p95": pct(v, 95), "p99": pct(v, 99), "max": max(v),
                           "n": len(v)} for lab, v in labs.items()} for key, labs in by.items()}
    return summary


async def run(args):
    second = args.vs or (args.bin if args.vs_env else None)
    binaries = [("A", args.bin, args.env)] + ([("B", second, args.vs_env)] if second else [])
    root = os.path.realpath(args.root)
    base = dict(os.environ)
    base.setdefault("SCRYER_DEPENDENCIES", "off")
    base.setdefault("SCRYER_PRECISE", "off")
    base.setdefault("SCRYER_LOG", "warn")
    work = tempfile.mkdtemp(prefix="scryer-latency-")
    servers = [Server(lab, os.path.realpath(b), os.path.join(work, f"{lab}.db"),
                      dict(base, **dict(kv.split("=", 1) for kv in env)), root)
               for lab, b, env in binaries]
    labels = [s.label for s in servers]
    try:
        for s in servers:
            await s.start(work)
            took = await s.index()
            extra = " ".join(next(env for lab, _, env in binaries if lab == s.label))
            print(f"{s.label} {s.binary} {extra}: indexed {root} in {took:.1f} s", flush=True)
        files = source_files(root, tuple(args.ext.split(",")))
        calls, defs = [], []
        for f in files:
            calls.append(("get_file_outline", "get_file_outline", {"file_path": f, "project": root}))
            _, text, err = await servers[0].call("get_file_outline",
                                                 {"file_path": f, "project": root, "no_truncate": True})
            if not err:
                defs += definitions(json.loads(text), f)
        names = {d[1] for d in defs}
        top = most_frequent(files, names, args.top)
        print(f"{len(files)} files, {len(defs)} definitions ({len(names)} names); "
              f"sample {min(args.sample, len(defs))} (seed {args.seed}) + top {len(top)}: "
              f"{', '.join(top[:12])}, ...", flush=True)
        calls += plan(defs, top, args.sample, args.seed, root)
        # Warm-up: every server answers each kind of call once, untimed.
        for _, tool, a in {c[1]: c for c in calls}.values():
            for s in servers:
                await s.call(tool, a)
        if args.answers:
            os.makedirs(args.answers, exist_ok=True)
            for s in servers:
                s.answers = open(os.path.join(args.answers, f"{s.label}.jsonl"), "w")
        results = []
        for i, (key, tool, a) in enumerate(calls):
            order = servers if i % 2 == 0 else list(reversed(servers))
            row = {"key": key, "tool": tool, "args": a}
            for s in order:
                ms, text, err = await s.call(tool, a)
                row[s.label] = ms
                row["chars"], row["error"] = len(text), row.get("error", False) or err
            results.append(row)
            if (i + 1) % 1000 == 0:
                print(f"  {i + 1}/{len(calls)} calls", flush=True)
        print()
        for (lab, _, env), s in zip(binaries, servers):
            print(f"{lab}: {s.binary} {' '.join(env)}")
        errors = sum(r["error"] for r in results)
        print(f"{len(results)} calls, {errors} answered with an error\n")
        summary = report(results, labels)
        if args.out:
            with open(args.out, "w") as f:
                json.dump({"root": root, "binaries": {lab: [b, env] for lab, b, env in binaries},
                           "calls": len(results),
                           "errors": errors, "summary": summary,
                           "slowest": sorted(results, key=lambda r: -r["A"])[:50],
                           **({"every": results} if args.every else {})}, f, indent=1)
    finally:
        # Sessions close in the reverse order they opened (their task groups nest).
        for s in reversed(servers):
            if s.answers:
                s.answers.close()
            try:
                await s.stop()
            except Exception as e:  # noqa: BLE001 - a stopped server may fail its shutdown
                print(f"{s.label}: stopping: {e}", file=sys.stderr)
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True, help="the scryer binary to measure")
    ap.add_argument("--vs", help="a second binary, measured beside the first")
    ap.add_argument("--env", action="append", default=[], metavar="K=V", help="a variable for the first")
    ap.add_argument("--vs-env", action="append", default=[], metavar="K=V",
                    help="a variable for the second (without --vs: the same binary)")
    ap.add_argument("--root", required=True, help="the project to index and query")
    ap.add_argument("--ext", default=".rs", help="source file extensions, comma-separated")
    ap.add_argument("--sample", type=int, default=1000, help="definitions drawn at random")
    ap.add_argument("--top", type=int, default=50, help="most frequent names added")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--answers", help="directory for every answer, one JSONL file per binary")
    ap.add_argument("--out", help="write the summary and the 50 slowest calls as JSON")
    ap.add_argument("--every", action="store_true", help="with --out, also every call's row")
    asyncio.run(run(ap.parse_args()))


if __name__ == "__main__":
    main()
