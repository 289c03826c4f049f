//! A serving process asks the kernel to read its database and kept search indexes into
//! the page cache as it starts, so that a session's first calls do not wait on the disk.
//!
//! A large project's first calls read scattered pages of the name indexes. On the
//! 7.17M-line monorepo, with the database's pages dropped from the cache, 5-10 of 50
//! first calls took over 100 ms (up to 427 ms); warmed, 0-2 did (up to 118 ms, on a busy
//! machine), in alternating sessions (docs/learnings/scale.md, stop 43).
//!
//! `posix_fadvise(WILLNEED)` starts the reads and returns. The whole 757 MB database
//! advised at once was cached about 0.4 s later, against 1.35 s to read it through, but
//! every read a call made waited behind it: a session's first search took 360-550 ms
//! against 140-250 ms with nothing warmed. So the reads are paced ([`warm`]) and asked
//! for in the idle I/O class, served when no one else waits (search 63-227 ms).
//!
//! No more than half the memory the kernel reports available is asked for. Nothing here
//! changes what an answer is; `SCRYER_WARM_CACHE=off` turns it off.
//!
//! **Architecture invariant:** a descriptor this module opens on the database or its
//! write-ahead log is never closed. turso's one-process-per-database guard is a POSIX
//! record lock (`fcntl(F_SETLK)`), which belongs to the process, and closing *any*
//! descriptor of the file releases it: a second process could then open the database
//! beside this one ([`Open::ForTheProcess`]).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The environment variable that turns warming off (`off`).
pub const ENV_WARM_CACHE: &str = "SCRYER_WARM_CACHE";

/// The share of available memory warming may ask the kernel to fill: the rest stays for
/// everything else the machine caches.
const AVAILABLE_SHARE: u64 = 2;

/// Advised per call: one call for a whole large file reads ahead only the kernel's
/// readahead window (8 MiB of a 757 MB file, measured), and each step is waited for
/// before the one after next (see [`warm`]).
const STEP_BYTES: u64 = 4 << 20;

/// Starts warming, on a thread of its own, the kept project search indexes beside the
/// database at `db_path`, then its write-ahead log and its file, unless
/// [`ENV_WARM_CACHE`] is `off`.
pub(crate) fn warm_in_background(db_path: &Path, search_projects: &Path) {
    if std::env::var(ENV_WARM_CACHE).is_ok_and(|v| v == "off") {
        return;
    }
    let mut wal = db_path.as_os_str().to_os_string();
    wal.push("-wal");
    let (db, wal) = (db_path.to_path_buf(), PathBuf::from(wal));
    let spawned = std::thread::Builder::new()
        .name("warm-page-cache".into())
        .spawn({
            let search_projects = search_projects.to_path_buf();
            move || {
                lower_priority();
                let started = std::time::Instant::now();
                // The search indexes first: a tenth of the database's size, and a
                // session's first call is often a search.
                let mut files: Vec<_> = files_under(&search_projects)
                    .into_iter()
                    .map(|f| (f, Open::Briefly))
                    .collect();
                files.extend([(wal, Open::ForTheProcess), (db, Open::ForTheProcess)]);
                let budget = available_bytes().map_or(0, |a| a / AVAILABLE_SHARE);
                let advised = warm(&files, budget);
                tracing::debug!(
                    target: "scryer::page_cache",
                    advised_mb = advised >> 20,
                    budget_mb = budget >> 20,
                    ms = started.elapsed().as_millis() as u64,
                    "page cache warming asked for"
                );
            }
        });
    if let Err(e) = spawned {
        tracing::debug!("page cache not warmed: {e}");
    }
}

/// How long a descriptor opened to warm a file is kept.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Open {
    /// Closed once the file is warmed: no one in this process locks it with `fcntl`
    /// (tantivy's and the daemon's locks are `flock` locks, held per open file).
    Briefly,
    /// Kept until the process ends, one per file: turso holds a POSIX record lock on it,
    /// which closing any descriptor of the file would release (the module's invariant).
    ForTheProcess,
}

/// The descriptors opened with [`Open::ForTheProcess`], by device and inode.
static KEPT: Mutex<Vec<(u64, u64, &'static File)>> = Mutex::new(Vec::new());

/// A descriptor of `path` to read through, opened as `how` says.
fn open(path: &Path, how: Open) -> Option<Kept> {
    match how {
        Open::Briefly => File::open(path).ok().map(Kept::Owned),
        Open::ForTheProcess => {
            use std::os::unix::fs::MetadataExt;
            let mut kept = KEPT.lock().unwrap_or_else(|p| p.into_inner());
            // Looked up by `stat`, which opens nothing: a second descriptor, dropped,
            // would release the lock.
            let meta = std::fs::metadata(path).ok()?;
            if let Some((_, _, file)) = kept
                .iter()
                .find(|(dev, ino, _)| (*dev, *ino) == (meta.dev(), meta.ino()))
            {
                return Some(Kept::Static(file));
            }
            let file: &'static File = Box::leak(Box::new(File::open(path).ok()?));
            let meta = file.metadata().ok()?;
            kept.push((meta.dev(), meta.ino(), file));
            Some(Kept::Static(file))
        }
    }
}

/// A descriptor [`open`] gave out.
enum Kept {
    Owned(File),
    Static(&'static File),
}

impl std::ops::Deref for Kept {
    type Target = File;
    fn deref(&self) -> &File {
        match self {
            Kept::Owned(f) => f,
            Kept::Static(f) => f,
        }
    }
}

/// Asks the kernel to read `files` into the page cache, in order, until `budget` bytes
/// are asked for; a file that would pass the budget is asked for in part. Returns the
/// bytes asked for. Files that cannot be opened are passed over.
pub(crate) fn warm(files: &[(PathBuf, Open)], budget: u64) -> u64 {
    let mut advised = 0u64;
    for (path, how) in files {
        let Some(file) = open(path, *how) else {
            continue;
        };
        let Ok(len) = file.metadata().map(|m| m.len()) else {
            continue;
        };
        let len = len.min(budget.saturating_sub(advised));
        let mut at = 0;
        while at < len {
            let step = STEP_BYTES.min(len - at);
            if !advise(&file, at, step) {
                break;
            }
            // Paced: the step before this one is waited for (a read of its last byte
            // returns once that page is in), so at most two steps of reads are queued
            // ahead of a call's own.
            if at > 0 {
                let mut byte = [0u8];
                let _ = std::os::unix::fs::FileExt::read_at(&*file, &mut byte, at - 1);
            }
            at += step;
        }
        advised += at;
        if advised >= budget {
            break;
        }
    }
    advised
}

/// Puts this thread's reads in the idle class, served when no one else's wait
/// (where the block layer's scheduler honours classes, as mq-deadline and BFQ do), and
/// the thread itself at the lowest CPU priority: advising a database already in the
/// page cache still walks its pages (a tenth of a short session's CPU on the monorepo),
/// and that should never take a core from a call.
#[cfg(target_os = "linux")]
fn lower_priority() {
    // SAFETY: sets the calling thread's nice value (`who` 0 is the calling thread on
    // Linux, where the nice value belongs to the thread); no memory is passed.
    if unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, 19) } != 0 {
        tracing::debug!(
            "page cache warming at normal CPU priority: {}",
            std::io::Error::last_os_error()
        );
    }
    const IOPRIO_WHO_PROCESS: libc::c_int = 1;
    const IOPRIO_CLASS_IDLE: libc::c_int = 3;
    const IOPRIO_CLASS_SHIFT: u32 = 13;
    // SAFETY: sets the calling thread's (`who` 0) I/O priority; no memory is passed.
    let set = unsafe {
        libc::syscall(
            libc::SYS_ioprio_set,
            IOPRIO_WHO_PROCESS,
            0,
            IOPRIO_CLASS_IDLE << IOPRIO_CLASS_SHIFT,
        )
    };
    if set != 0 {
        tracing::debug!(
            "page cache warming at normal I/O priority: {}",
            std::io::Error::last_os_error()
        );
    }
}

#[cfg(not(target_os = "linux"))]
fn lower_priority() {}

#[cfg(target_os = "linux")]
fn advise(file: &std::fs::File, offset: u64, len: u64) -> bool {
    use std::os::fd::AsRawFd;
    let (Ok(offset), Ok(len)) = (libc::off_t::try_from(offset), libc::off_t::try_from(len)) else {
        return false;
    };
    // SAFETY: the descriptor is open for the call's length (`file` is borrowed); the
    // advice only starts reads into the page cache.
    unsafe { libc::posix_fadvise(file.as_raw_fd(), offset, len, libc::POSIX_FADV_WILLNEED) == 0 }
}

#[cfg(not(target_os = "linux"))]
fn advise(_: &std::fs::File, _: u64, _: u64) -> bool {
    false
}

/// The memory the kernel reports available (`MemAvailable`), where it does.
fn available_bytes() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    mem_available(&info)
}

fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The files under `dir`, at any depth, in a stable order.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(e.path()),
                Ok(t) if t.is_file() => out.push(e.path()),
                _ => {}
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn available_memory_is_read_from_meminfo_and_nothing_else() {
        let info = "MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   2048 kB\n";
        assert_eq!(mem_available(info), Some(2048 * 1024));
        assert_eq!(mem_available("MemTotal: 5 kB\n"), None);
        assert_eq!(mem_available("MemAvailable: lots kB\n"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn files_are_asked_for_in_order_until_the_budget_is_spent() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, vec![1u8; 3 << 20]).unwrap();
        std::fs::write(&b, vec![2u8; 1 << 20]).unwrap();
        let missing = dir.path().join("missing");
        let briefly = |paths: &[&PathBuf]| -> Vec<(PathBuf, Open)> {
            paths
                .iter()
                .map(|p| ((*p).clone(), Open::Briefly))
                .collect()
        };
        let files = briefly(&[&missing, &a, &b]);
        assert_eq!(warm(&files, u64::MAX), 4 << 20, "every byte of both files");
        assert_eq!(warm(&files, 2 << 20), 2 << 20, "the first file in part");
        assert_eq!(warm(&briefly(&[&b, &a]), (1 << 20) + 5), (1 << 20) + 5);
        assert_eq!(warm(&files, 0), 0);
        assert_eq!(warm(&briefly(&[&missing]), u64::MAX), 0);
    }

    /// Where the file system lets pages be dropped (not a tmpfs), warming brings a file
    /// whose pages were dropped back into the page cache.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_warmed_file_comes_back_into_the_page_cache() {
        use std::os::fd::AsRawFd;
        // Beside the crate, on the checkout's disk: `/tmp` may be a tmpfs, whose pages
        // cannot be dropped.
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let path = dir.path().join("db");
        let len = 16usize << 20;
        std::fs::write(&path, vec![7u8; len]).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        file.sync_all().unwrap();
        let resident = || -> usize {
            let page = 4096usize;
            // SAFETY: a read-only shared mapping of a file this test owns, unmapped below.
            unsafe {
                let map = libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ,
                    libc::MAP_SHARED,
                    file.as_raw_fd(),
                    0,
                );
                assert_ne!(map, libc::MAP_FAILED);
                let mut vec = vec![0u8; len.div_ceil(page)];
                assert_eq!(libc::mincore(map, len, vec.as_mut_ptr()), 0);
                libc::munmap(map, len);
                vec.iter().filter(|v| *v & 1 == 1).count()
            }
        };
        // SAFETY: advice on a descriptor this test holds open.
        let dropped =
            unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        assert_eq!(dropped, 0);
        assert!(
            resident() < len / 4096 / 2,
            "the checkout's file system kept the pages; this test needs one that drops them"
        );
        assert_eq!(warm(&[(path.clone(), Open::Briefly)], u64::MAX), len as u64);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while resident() < len / 4096 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(resident(), len / 4096, "every page read back in");
    }

    /// Warming the database leaves turso's lock on it in place: closing a descriptor of
    /// a file releases every POSIX lock the process holds on it, and a second process
    /// could then open the database (a regression CI caught).
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn warming_the_database_keeps_turso_s_lock() {
        use std::os::fd::AsRawFd;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.db");
        let db = scryer_db::Db::open(&path).await.unwrap();
        // An open-file-description lock conflicts with a POSIX record lock even in the
        // same process, so F_OFD_GETLK from here sees turso's lock while it is held.
        let probe = File::open(&path).unwrap();
        let write_lock_seen = || -> libc::c_short {
            let mut lock: libc::flock = unsafe { std::mem::zeroed() };
            lock.l_type = libc::F_WRLCK as libc::c_short;
            lock.l_whence = libc::SEEK_SET as libc::c_short;
            // SAFETY: a query on a descriptor this test holds, into a local struct.
            let rc = unsafe { libc::fcntl(probe.as_raw_fd(), libc::F_OFD_GETLK, &mut lock) };
            assert_eq!(rc, 0, "{}", std::io::Error::last_os_error());
            lock.l_type
        };
        assert_ne!(
            write_lock_seen(),
            libc::F_UNLCK as libc::c_short,
            "turso locks its file"
        );
        let files = [(path.clone(), Open::ForTheProcess)];
        assert!(warm(&files, u64::MAX) > 0);
        assert!(warm(&files, u64::MAX) > 0);
        let kept_for_this_file = || {
            use std::os::unix::fs::MetadataExt;
            let meta = std::fs::metadata(&path).unwrap();
            let kept = KEPT.lock().unwrap_or_else(|p| p.into_inner());
            kept.iter()
                .filter(|(dev, ino, _)| (*dev, *ino) == (meta.dev(), meta.ino()))
                .count()
        };
        assert_eq!(
            kept_for_this_file(),
            1,
            "a second warming reuses the kept descriptor"
        );
        assert_ne!(
            write_lock_seen(),
            libc::F_UNLCK as libc::c_short,
            "the lock outlives warming"
        );
        drop(db);
    }

    /// Only the warming thread is lowered: the nice value is the thread's on Linux, and
    /// a serving process at nice 19 would answer every call behind everything else.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_warming_thread_alone_runs_at_the_lowest_priority() {
        // SAFETY: reads the calling thread's nice value.
        let nice = || unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
        let before = nice();
        let lowered = std::thread::spawn(move || {
            lower_priority();
            nice()
        })
        .join()
        .unwrap();
        assert_eq!(lowered, 19);
        assert_eq!(nice(), before, "the rest of the process keeps its priority");
    }
}
