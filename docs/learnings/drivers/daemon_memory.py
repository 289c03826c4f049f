# Drives a scryer daemon with default settings on tokio through the MCP Python SDK:
# index_workspace, then 90 s of get_indexing_status while the locked crates are indexed,
# then three dependency searches (the first builds every crate's search index), printing
# the daemon's RSS and peak RSS (VmRSS, VmHWM) throughout.
#
#   python daemon_memory.py SCRYER_BINARY FRESH_DB_PATH
#
# Needs the eval venv (../../shared/eval/requirements.txt) and the tokio corpus.
import asyncio, os, sys, time, subprocess, re
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
BIN, DB, ROOT = sys.argv[1], sys.argv[2], os.path.expanduser("~/.cache/scryer-eval/corpus/tokio")
def daemon_pids():
    out = subprocess.run(["pgrep", "-f", f"{DB}.*daemon run|daemon run.*{DB}"], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]
def rss(pid):
    try:
        s = open(f"/proc/{pid}/status").read()
        return int(re.search(r"VmRSS:\s+(\d+)", s).group(1))//1024, int(re.search(r"VmHWM:\s+(\d+)", s).group(1))//1024
    except Exception: return None
async def main():
    params = StdioServerParameters(command=BIN, args=["--db", DB, "serve"], env=dict(os.environ))
    t0 = time.time()
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            res = await s.call_tool("index_workspace", {"path": ROOT})
            print(f"{time.time()-t0:6.1f}s index_workspace: {res.content[0].text[:150]}", flush=True)
            for i in range(18):
                pids = daemon_pids()
                st = await s.call_tool("get_indexing_status", {})
                txt = st.content[0].text
                m = re.search(r'"dependencies":\{[^}]*\}', txt)
                print(f"{time.time()-t0:6.1f}s rss/hwm MB {[rss(p) for p in pids]} {m.group(0)[:160] if m else txt[:160]}", flush=True)
                if m and '"pending"' not in m.group(0) and i > 2: break
                await asyncio.sleep(5)
            for q in range(3):
                t = time.time()
                res = await s.call_tool("search_symbols", {"query": "read exact", "scope_level": "dependencies"})
                print(f"{time.time()-t0:6.1f}s dep search {time.time()-t:.1f}s rss/hwm {[rss(p) for p in daemon_pids()]} {res.content[0].text[:120]}", flush=True)
                await asyncio.sleep(10)
asyncio.run(main())
