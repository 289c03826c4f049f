//! Project files read recently, kept with what `lstat` said of them: reading one again
//! (`read-lines`, a usage list's line texts) costs one `lstat` while it is unchanged.
//!
//! The safe read ([`Root::read_rel`]) canonicalizes the root, checks the path, opens the
//! file without following links, reads its real path back and then the whole file. Under
//! 32 busy sessions that was 6.8–8 % of the daemon's CPU (docs/learnings/scale.md, stop 45),
//! mostly for the same few files read again and again.
//!
//! Architecture invariant: kept bytes are handed out only while `lstat` of the same path
//! gives the device, inode, size, modification and change times it gave just before those
//! bytes were read through the safe path. Anything else (a changed or replaced file, a
//! link, a parent directory swapped for a link to another file) reads through the safe
//! path again, which refuses what it always refused. A file changed less than [`RACY`]
//! before it was read is not kept: timestamps can be as coarse as a clock tick, so a write
//! of the same size in the same tick would leave the stamp unchanged (git's "racily clean"
//! files). The change time cannot be set by a user, so `touch -d` does not hide a write.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use scryer_engine::safe_fs::{Refused, Root};

/// Files kept at most.
const MAX_FILES: usize = 256;
/// Bytes kept at most, all files together.
const MAX_BYTES: usize = 32 << 20;
/// A file larger than this is read through every time.
const MAX_FILE_BYTES: usize = 2 << 20;
/// How long after its last change a file is kept (see the module's invariant).
pub(crate) const RACY: Duration = Duration::from_secs(2);

/// What `lstat` says of a file, as compared before handing out its kept bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    /// `None` for anything but a regular file (a link, a directory, nothing).
    fn of(path: &Path) -> Option<Stamp> {
        let meta = std::fs::symlink_metadata(path).ok()?;
        meta.file_type().is_file().then(|| Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        })
    }

    /// Whether the file last changed at least `racy` before `now`.
    fn settled(&self, now: SystemTime, racy: Duration) -> bool {
        let Ok(now) = now.duration_since(SystemTime::UNIX_EPOCH) else {
            return false;
        };
        let latest = self.mtime.max(self.ctime);
        let Ok(secs) = u64::try_from(latest.0) else {
            return false;
        };
        let changed = Duration::from_secs(secs) + Duration::from_nanos(latest.1.max(0) as u64);
        changed + racy <= now
    }
}

struct Kept {
    stamp: Stamp,
    bytes: Arc<[u8]>,
    used: u64,
}

#[derive(Default)]
struct Files {
    by_path: HashMap<PathBuf, Kept>,
    bytes: usize,
    clock: u64,
}

/// The process's kept files (see the module's doc).
pub(crate) struct FileCache {
    files: Mutex<Files>,
    racy: Duration,
    /// Reads answered from kept bytes (tests).
    #[cfg(test)]
    hits: std::sync::atomic::AtomicUsize,
}

impl FileCache {
    pub(crate) fn new(racy: Duration) -> FileCache {
        FileCache {
            files: Mutex::new(Files::default()),
            racy,
            #[cfg(test)]
            hits: Default::default(),
        }
    }

    /// The bytes of `rel` (a path relative to `root`, as `project_relative` makes it), at
    /// most the source cap, refused as [`Root::read_rel`] refuses.
    pub(crate) fn read(&self, root: &Path, rel: &str) -> Result<Arc<[u8]>, Refused> {
        let path = root.join(rel);
        let stamp = Stamp::of(&path);
        {
            let mut files = self.lock();
            files.clock += 1;
            let clock = files.clock;
            match files.by_path.get_mut(&path) {
                Some(kept) if Some(kept.stamp) == stamp => {
                    kept.used = clock;
                    #[cfg(test)]
                    self.hits.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    return Ok(kept.bytes.clone());
                }
                // Changed, replaced or gone: its bytes are never handed out again.
                Some(_) => {
                    if let Some(stale) = files.by_path.remove(&path) {
                        files.bytes -= stale.bytes.len();
                    }
                }
                None => {}
            }
        }
        // Taken before the read: if the file changes after it, the next `lstat` differs.
        let bytes: Arc<[u8]> = Root::new(root)
            .map_err(Refused::Io)?
            .read_rel(rel, scryer_engine::file_limits::MAX_SOURCE_BYTES)?
            .into();
        if let Some(stamp) = stamp
            && bytes.len() <= MAX_FILE_BYTES
            && stamp.settled(SystemTime::now(), self.racy)
        {
            self.keep(path, stamp, bytes.clone());
        }
        Ok(bytes)
    }

    fn keep(&self, path: PathBuf, stamp: Stamp, bytes: Arc<[u8]>) {
        let mut files = self.lock();
        files.clock += 1;
        let used = files.clock;
        files.bytes += bytes.len();
        if let Some(old) = files.by_path.insert(path, Kept { stamp, bytes, used }) {
            files.bytes -= old.bytes.len();
        }
        while files.by_path.len() > MAX_FILES || files.bytes > MAX_BYTES {
            let Some(oldest) = files
                .by_path
                .iter()
                .min_by_key(|(_, k)| k.used)
                .map(|(p, _)| p.clone())
            else {
                break;
            };
            if let Some(gone) = files.by_path.remove(&oldest) {
                files.bytes -= gone.bytes.len();
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Files> {
        self.files.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    fn hits(cache: &FileCache) -> usize {
        cache.hits.load(Ordering::Relaxed)
    }

    #[test]
    fn kept_bytes_are_handed_out_only_while_the_file_is_the_one_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(root.join("a.rs"), "fn a() {}\n").unwrap();
        // No settling time: every file read is kept.
        let cache = FileCache::new(Duration::ZERO);

        assert_eq!(&*cache.read(&root, "a.rs").unwrap(), b"fn a() {}\n");
        assert_eq!(&*cache.read(&root, "a.rs").unwrap(), b"fn a() {}\n");
        assert_eq!(hits(&cache), 1, "the second read is the kept bytes");

        // Rewritten in place, longer.
        std::fs::write(root.join("a.rs"), "fn a() { b() }\n").unwrap();
        assert_eq!(&*cache.read(&root, "a.rs").unwrap(), b"fn a() { b() }\n");
        assert_eq!(hits(&cache), 1);

        // Replaced by another file of the same size and the same modification time.
        let mtime = std::fs::metadata(root.join("a.rs"))
            .unwrap()
            .modified()
            .unwrap();
        std::fs::write(root.join("b.tmp"), "fn z() { y() }\n").unwrap();
        std::fs::File::options()
            .write(true)
            .open(root.join("b.tmp"))
            .unwrap()
            .set_modified(mtime)
            .unwrap();
        std::fs::rename(root.join("b.tmp"), root.join("a.rs")).unwrap();
        assert_eq!(&*cache.read(&root, "a.rs").unwrap(), b"fn z() { y() }\n");

        // Replaced by a link to a file outside the root: refused, as the safe read refuses.
        std::fs::write(outside.path().join("secret"), "fn z() { y() }\n").unwrap();
        cache.read(&root, "a.rs").unwrap();
        std::fs::remove_file(root.join("a.rs")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), root.join("a.rs")).unwrap();
        let before = hits(&cache);
        assert!(cache.read(&root, "a.rs").is_err());
        assert_eq!(hits(&cache), before);
        assert!(
            !cache.lock().by_path.contains_key(&root.join("a.rs")),
            "a file's kept bytes go once it is not the file read"
        );

        // A parent directory swapped for a link to a directory outside the root.
        std::fs::create_dir(root.join("src")).unwrap();
        std::fs::write(root.join("src/lib.rs"), "fn z() { y() }\n").unwrap();
        cache.read(&root, "src/lib.rs").unwrap();
        std::fs::write(outside.path().join("lib.rs"), "fn z() { y() }\n").unwrap();
        std::fs::rename(root.join("src"), root.join("old")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("src")).unwrap();
        let before = hits(&cache);
        assert!(cache.read(&root, "src/lib.rs").is_err());
        assert_eq!(hits(&cache), before);

        // Gone.
        std::fs::remove_file(root.join("old/lib.rs")).unwrap();
        assert!(matches!(
            cache.read(&root, "old/lib.rs"),
            Err(Refused::Missing)
        ));
    }

    #[test]
    fn a_file_changed_within_the_settling_time_is_read_through_every_time() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("fresh.rs"), "fn f() {}\n").unwrap();
        let cache = FileCache::new(RACY);
        for _ in 0..3 {
            assert_eq!(&*cache.read(&root, "fresh.rs").unwrap(), b"fn f() {}\n");
        }
        assert_eq!(hits(&cache), 0);
        // Its stamp, seen from far enough after, is settled.
        let stamp = Stamp::of(&root.join("fresh.rs")).unwrap();
        assert!(!stamp.settled(SystemTime::now(), RACY));
        assert!(stamp.settled(SystemTime::now() + RACY + RACY, RACY));
    }

    #[test]
    fn the_kept_files_stay_within_their_count_and_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let cache = FileCache::new(Duration::ZERO);
        let big = vec![b'x'; MAX_FILE_BYTES];
        for i in 0..(MAX_BYTES / MAX_FILE_BYTES + 3) {
            std::fs::write(root.join(format!("big{i}.rs")), &big).unwrap();
            cache.read(&root, &format!("big{i}.rs")).unwrap();
        }
        for i in 0..MAX_FILES + 10 {
            std::fs::write(root.join(format!("s{i}.rs")), "x").unwrap();
            cache.read(&root, &format!("s{i}.rs")).unwrap();
        }
        let files = cache.lock();
        assert!(files.by_path.len() <= MAX_FILES);
        assert!(files.bytes <= MAX_BYTES);
        assert_eq!(
            files.bytes,
            files.by_path.values().map(|k| k.bytes.len()).sum::<usize>()
        );
        // The most recent ones are the ones kept.
        assert!(
            files
                .by_path
                .contains_key(&root.join(format!("s{}.rs", MAX_FILES + 9)))
        );
        assert!(!files.by_path.contains_key(&root.join("big0.rs")));
    }
}
