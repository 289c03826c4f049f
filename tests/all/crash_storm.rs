//! `kill -9` of the daemon at seeded random moments (issue 19, ADR 0025), during a cold
//! index, a re-index after a branch switch, `record_adr`, `delete_adr` and
//! `delete_project`. After each kill: the database file passes `PRAGMA
//! integrity_check` (opened by the test while no daemon runs), nothing was set aside as
//! damaged, and after the restart every ADR file has its row and every row its file,
//! the project is either ready or visibly indexing (`indexing`, or `stale` while an
//! interrupted re-index is redone), and the next `find_references`
//! answers the exact count of the checked-out branch.
//!
//! `SCRYER_CRASH_MOMENTS` (default 6; the long run is 50) and `SCRYER_CRASH_SEED`
//! (default 19) choose the moments; a failure names the seed and the moment.
//! Damaged files are the second test: truncated, zeroed in the middle, a newer schema.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support;
use crate::support::daemon::DaemonEnv;

const MODULES: usize = 300;
const CALLS: usize = 20;
/// On the `other` branch the first half of the modules call `hit` once instead.
const OTHER_SITES: usize = (MODULES / 2) + (MODULES - MODULES / 2) * CALLS + 1;
const MAIN_SITES: usize = MODULES * CALLS + 1;

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// xorshift64*: the moments must be the same for one seed on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn git(root: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-C"])
        .arg(root)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

fn module_text(i: usize, calls: usize) -> String {
    let mut body =
        format!("use crate::shared;\n\npub fn run_{i}() -> u32 {{\n    let mut x = 0;\n");
    for _ in 0..calls {
        body.push_str("    x = shared::hit(x);\n");
    }
    body.push_str("    x\n}\n");
    body
}

/// A git repository with branches `main` and `other`, and one ADR.
fn repository(root: &Path) {
    std::fs::create_dir_all(root.join("src/m")).unwrap();
    std::fs::create_dir_all(root.join("docs/adr")).unwrap();
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"storm\"\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    std::fs::write(
        root.join("src/lib.rs"),
        "pub mod shared;\npub mod m;\npub fn entry() -> u32 { shared::hit(0) }\n",
    )
    .unwrap();
    std::fs::write(
        root.join("src/shared.rs"),
        "pub fn hit(n: u32) -> u32 { n + 1 }\n",
    )
    .unwrap();
    std::fs::write(
        root.join("docs/adr/0001-first.md"),
        "---\nnumber: 1\ntitle: First\nstatus: accepted\ndate: 2026-12-01\n---\n\n# First\n\n## Decision\n\nKeep it.\n",
    )
    .unwrap();
    let mut m = String::new();
    for i in 0..MODULES {
        m.push_str(&format!("pub mod f{i};\n"));
        std::fs::write(root.join(format!("src/m/f{i}.rs")), module_text(i, CALLS)).unwrap();
    }
    std::fs::write(root.join("src/m/mod.rs"), m).unwrap();
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "main"]);
    git(root, &["checkout", "-qb", "other"]);
    for i in 0..MODULES / 2 {
        std::fs::write(root.join(format!("src/m/f{i}.rs")), module_text(i, 1)).unwrap();
    }
    git(root, &["commit", "-qam", "other"]);
    git(root, &["checkout", "-q", "main"]);
}

/// The ADR numbers of the files under docs/adr (each number once).
fn file_numbers(root: &Path) -> BTreeSet<u64> {
    let mut seen = Vec::new();
    for e in std::fs::read_dir(root.join("docs/adr")).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(n) = name.get(..4).and_then(|p| p.parse::<u64>().ok()) {
            seen.push(n);
        }
    }
    let set: BTreeSet<u64> = seen.iter().copied().collect();
    assert_eq!(
        set.len(),
        seen.len(),
        "two ADR files share a number: {seen:?}"
    );
    set
}

#[derive(Clone, Copy, Debug)]
enum Op {
    ColdIndex,
    BranchSwitch,
    RecordAdr,
    DeleteAdr,
    DeleteProject,
}

const OPS: [Op; 5] = [
    Op::ColdIndex,
    Op::BranchSwitch,
    Op::RecordAdr,
    Op::DeleteAdr,
    Op::DeleteProject,
];

impl Op {
    /// The window the kill falls in, in ms after the call is sent.
    fn window_ms(self) -> u64 {
        match self {
            Op::ColdIndex | Op::BranchSwitch => 4000,
            Op::RecordAdr | Op::DeleteAdr => 80,
            Op::DeleteProject => 300,
        }
    }
}

struct Storm {
    env: DaemonEnv,
    root: std::path::PathBuf,
    branch: &'static str,
    _tmp: tempfile::TempDir,
}

impl Storm {
    fn root_str(&self) -> &str {
        self.root.to_str().unwrap()
    }

    /// Starts the operation, kills the daemon `delay` ms later, and waits until it is gone.
    async fn kill_during(&mut self, op: Op, delay: u64) {
        let client = self.env.client(self.env.state.path(), &[]).await;
        let (_, is_error) = client.call("list_projects", json!({})).await;
        assert!(!is_error);
        let pid = self.env.daemon_pid().expect("a daemon runs");
        let root = self.root_str().to_string();
        let args = match op {
            Op::ColdIndex => {
                // Forget the project first (a completed call), so the index is cold.
                let _ = client
                    .call("delete_project", json!({"project": root, "confirm": true}))
                    .await;
                ("index_workspace", json!({"path": root}))
            }
            Op::BranchSwitch => {
                self.branch = if self.branch == "main" {
                    "other"
                } else {
                    "main"
                };
                git(&self.root, &["checkout", "-q", self.branch]);
                ("index_workspace", json!({"path": root}))
            }
            Op::RecordAdr => (
                "record_adr",
                json!({"project": root, "title": format!("Storm {delay}"), "decision": "Survive."}),
            ),
            Op::DeleteAdr => {
                let newest = file_numbers(&self.root).into_iter().max().unwrap_or(1);
                ("delete_adr", json!({"project": root, "adr_number": newest}))
            }
            Op::DeleteProject => ("delete_project", json!({"project": root, "confirm": true})),
        };
        let call = tokio::spawn(async move {
            let _ = client.call(args.0, args.1).await;
            client
        });
        tokio::time::sleep(Duration::from_millis(delay)).await;
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        let started = Instant::now();
        while Path::new(&format!("/proc/{pid}")).exists() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "pid {pid} lives"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        call.abort();
        let _ = call.await;
    }

    /// The file on its own, while no daemon runs: sound, nothing set aside.
    async fn check_file(&self, what: &str) {
        // The relay of the killed session may still be exiting; the lock is the daemon's.
        let db = scryer_db::Db::open(&self.env.db)
            .await
            .unwrap_or_else(|e| panic!("{what}: the database does not open: {e:#}"));
        let problems = db.integrity_check().await.unwrap();
        assert!(problems.is_empty(), "{what}: integrity: {problems:?}");
        drop(db);
        let kept = scryer_db::kept_aside(&self.env.db);
        assert!(kept.is_empty(), "{what}: set aside: {kept:?}");
    }

    /// After the restart: the project is ready or indexing, ADR files and rows agree,
    /// and the next query is exact.
    async fn check_served(&self, what: &str) {
        let client = self.env.client(self.env.state.path(), &[]).await;
        let listed = client.call_json("list_projects", json!({})).await;
        if listed["total"] == 0 {
            let answer = client
                .call_json("index_workspace", json!({"path": self.root_str()}))
                .await;
            assert_eq!(answer["state"], "ready", "{what}: {answer}");
        } else {
            let status = client
                .call_json("get_indexing_status", json!({"project": self.root_str()}))
                .await;
            let state = status["state"].as_str().unwrap_or("").to_string();
            // `stale`: an interrupted re-index (a branch switch) is being redone over the
            // previous index, which is visible as such.
            assert!(
                ["ready", "indexing", "stale"].contains(&state.as_str()),
                "{what}: state {state}: {status}"
            );
        }
        let refs = client
            .call_json(
                "find_references",
                json!({"project": self.root_str(), "symbol": "hit", "view": "files", "no_truncate": true}),
            )
            .await;
        let sites = if self.branch == "main" {
            MAIN_SITES
        } else {
            OTHER_SITES
        };
        if refs["total_sites"] != sites {
            // A branch switch killed before the run began: the next re-index sees it.
            let again = client
                .call_json("index_workspace", json!({"path": self.root_str()}))
                .await;
            assert_eq!(again["state"], "ready", "{what}: {again}");
            let refs = client
                .call_json(
                    "find_references",
                    json!({"project": self.root_str(), "symbol": "hit", "view": "files", "no_truncate": true}),
                )
                .await;
            assert_eq!(refs["total_sites"], sites, "{what} ({})", self.branch);
        }
        let adrs = client
            .call_json(
                "query_adrs",
                json!({"project": self.root_str(), "limit": 50}),
            )
            .await;
        // Answers never carry an empty list (the SDK's compact JSON drops it): no ADR
        // left is no `items`, with `total: 0` and a note saying the project has none.
        if adrs.get("items").is_none() {
            assert_eq!(adrs["total"], 0, "{what}: {adrs}");
            assert!(
                adrs["notes"]
                    .to_string()
                    .contains("record one with record_adr"),
                "{what}: an empty list is explained: {adrs}"
            );
        }
        let rows: BTreeSet<u64> = adrs["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|i| i["kind"].as_str().is_none_or(|k| k == "adr"))
            .filter_map(|i| i["number"].as_u64())
            .collect();
        assert_eq!(
            rows,
            file_numbers(&self.root),
            "{what}: ADR rows vs files: {adrs}"
        );
        client.stop().await;
    }
}

#[tokio::test]
async fn the_daemon_killed_at_random_moments_loses_nothing() {
    let moments = env_or("SCRYER_CRASH_MOMENTS", 6);
    let seed = env_or("SCRYER_CRASH_SEED", 19);
    let tmp = tempfile::Builder::new()
        .prefix("scryer-storm-")
        .tempdir()
        .unwrap();
    let root = tmp.path().canonicalize().unwrap().join("storm");
    repository(&root);
    let mut storm = Storm {
        env: DaemonEnv::new(),
        root,
        branch: "main",
        _tmp: tmp,
    };
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let started = Instant::now();
    for i in 0..moments {
        let op = OPS[rng.below(OPS.len() as u64) as usize];
        let delay = rng.below(op.window_ms());
        let what = format!("seed {seed}, moment {i}: {op:?} killed after {delay} ms");
        storm.kill_during(op, delay).await;
        storm.check_file(&what).await;
        storm.check_served(&what).await;
        eprintln!("{what}: survived ({:?} so far)", started.elapsed());
    }
}

/// What `scryer doctor` prints for the environment's database.
fn doctor(env: &DaemonEnv) -> String {
    let out = env.command(&["doctor"]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

/// One way to damage a database file, by name.
type Damage = (&'static str, fn(&Path));

/// Damages the database three ways; each time the server starts on a fresh file, the
/// damaged one is kept with a note, the project can be indexed again, and doctor says
/// what happened.
#[tokio::test]
async fn a_damaged_database_is_kept_aside_and_rebuilt() {
    let (_tmp, root) = support::fixture_copy("workspace");
    let damages: [Damage; 3] = [
        ("truncated", |db| {
            let len = std::fs::metadata(db).unwrap().len();
            let f = std::fs::OpenOptions::new().write(true).open(db).unwrap();
            f.set_len(len / 3).unwrap();
        }),
        ("zeroed in the middle", |db| {
            use std::io::{Seek, SeekFrom, Write};
            let len = std::fs::metadata(db).unwrap().len();
            let mut f = std::fs::OpenOptions::new().write(true).open(db).unwrap();
            f.seek(SeekFrom::Start(len / 4)).unwrap();
            f.write_all(&vec![0u8; (len / 2) as usize]).unwrap();
        }),
        ("from a newer schema", |_| {}),
    ];
    for (i, (what, damage)) in damages.iter().enumerate() {
        let env = DaemonEnv::new();
        let client = env.client(env.state.path(), &[]).await;
        let answer = client
            .call_json("index_workspace", json!({"path": root.to_str().unwrap()}))
            .await;
        assert_eq!(answer["state"], "ready");
        client.stop().await;
        let _ = env.command(&["daemon", "stop"]).output();
        if i == 2 {
            // A newer build's daemon, exiting cleanly, leaves its stamp in the file.
            let db = scryer_db::Db::open(&env.db).await.unwrap();
            db.stamp_schema_version(999).await.unwrap();
            db.checkpoint().await.unwrap();
        } else {
            // The daemon's clean stop folded the WAL into the file: the damage is to
            // the whole database, not to a header in front of a log.
            assert!(
                std::fs::metadata(env.db.with_extension("db-wal")).map_or(true, |m| m.len() == 0),
                "{what}: the stopped daemon left a WAL with frames"
            );
            damage(&env.db);
        }
        let _ = std::fs::remove_file(env.db.with_extension("db-wal"));

        let client = env.client(env.state.path(), &[]).await;
        let listed = client.call_json("list_projects", json!({})).await;
        assert_eq!(listed["total"], 0, "{what}: a fresh database: {listed}");
        let answer = client
            .call_json("index_workspace", json!({"path": root.to_str().unwrap()}))
            .await;
        assert_eq!(answer["state"], "ready", "{what}: {answer}");
        let hits = client
            .call_json("search_symbols", json!({"query": "total_area"}))
            .await;
        assert!(hits.to_string().contains("total_area"), "{what}: {hits}");
        client.stop().await;
        let _ = env.command(&["daemon", "stop"]).output();

        let kept = scryer_db::kept_aside(&env.db);
        assert_eq!(kept.len(), 1, "{what}: {kept:?}");
        assert!(kept[0].0.exists(), "{what}: the damaged file is kept");
        let report = doctor(&env);
        assert!(
            report.contains(kept[0].0.to_str().unwrap()) && report.contains("fresh index"),
            "{what}: doctor does not say what happened:\n{report}"
        );
        if i == 2 {
            assert!(report.contains("newer scryer"), "{report}");
        }
        eprintln!("{what}: {}", kept[0].1);
    }
}
