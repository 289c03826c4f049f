"""A stdlib-only MCP stdio probe (docs/learnings/scale.md): common-name calls, each twice, through `BIN --db DB serve --no-daemon`."""
import json, subprocess, sys, time
bin_, db, root = sys.argv[1:4]
p = subprocess.Popen([bin_, "--db", db, "serve", "--no-daemon"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.DEVNULL, cwd=root, text=True, env={"SCRYER_PRECISE": "off", "SCRYER_LOG": "error", "PATH": "/usr/bin:/bin", "HOME": "/root"})
n = 0
def rpc(method, params, notify=False):
    global n
    msg = {"jsonrpc": "2.0", "method": method, "params": params}
    if not notify:
        n += 1; msg["id"] = n
    p.stdin.write(json.dumps(msg) + "\n"); p.stdin.flush()
    if notify: return None
    while True:
        line = json.loads(p.stdout.readline())
        if line.get("id") == n: return line
rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "0"}})
rpc("notifications/initialized", {}, notify=True)
calls = [("find_references", {"symbol": "new", "view": v}) for v in ("sites", "callers", "files")]
calls += [("find_references", {"symbol": "new", "view": "files", "usage_offset": 10000}),
          ("trace_call_hierarchy", {"symbol": "new"}), ("trace_call_hierarchy", {"symbol": "m0001::T1::new"}),
          ("calculate_blast_radius", {"symbol": "m0001::T1::new"}), ("inspect_symbol", {"symbol": "m0001::T1::new"}),
          ("inspect_symbol", {"symbol": "new"}), ("find_references", {"symbol": "m0001::T1::new", "view": "sites"})]
for name, args in calls:
    for rep in range(2):
        t = time.perf_counter()
        r = rpc("tools/call", {"name": name, "arguments": dict(args, project=root)})
        ms = (time.perf_counter() - t) * 1000
        res = r.get("result", {}); text = (res.get("content") or [{}])[0].get("text", "") if res else json.dumps(r.get("error"))
        err = bool(res.get("isError")) or "error" in r
        try: nxt = json.loads(text).get("next_usage_offset")
        except Exception: nxt = "non-JSON"
        print(f"{name} {json.dumps(args)} rep{rep}: {'ERROR' if err else 'ok'} {ms:.0f} ms next_usage_offset={nxt} {text[:110] if err else ''}")
p.stdin.close(); p.wait(timeout=30)
