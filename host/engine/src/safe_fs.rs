//! The one gate between a checkout and the index: which paths may be read, and how.
//!
//! A cloned repository is untrusted input. A path is read only when it is a regular file
//! whose real path is the path itself, inside the root (no symlink, neither the file nor
//! a parent directory): a link leaving the root is refused as [`Refused::LeavesRoot`] and
//! counted by the callers, a link inside the root is refused as [`Refused::Link`] (its
//! target is read under its own path). FIFOs, sockets and devices are never opened: the
//! type is checked with `lstat` before the open and again with `fstat` after it (an
//! `O_NOFOLLOW | O_NONBLOCK` open, so a swapped-in link or FIFO neither redirects nor
//! blocks it), and the opened file's real path is read back from `/proc/self/fd` so a
//! parent directory swapped for a link between the check and the open is caught too.
//! Every read goes through `take(cap + 1)`: a file above its cap is [`Refused::TooLarge`].

use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};

/// Why a path was not read.
#[derive(Debug)]
pub enum Refused {
    /// Nothing there (or a parent is not a directory).
    Missing,
    /// A symlink, or a path through one, resolving outside the root (to this path).
    LeavesRoot(PathBuf),
    /// A symlink, or a path through one, resolving inside the root.
    Link,
    /// Not a regular file: a directory, FIFO, socket or device (the kind named).
    NotRegular(&'static str),
    /// Larger than the cap (at least this many bytes).
    TooLarge(u64),
    Io(io::Error),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Missing => write!(f, "no such file"),
            Refused::LeavesRoot(to) => {
                write!(f, "a link leading outside the root (to {})", to.display())
            }
            Refused::Link => write!(f, "a symlink (its target is read under its own path)"),
            Refused::NotRegular(kind) => write!(f, "a {kind}, not a regular file"),
            Refused::TooLarge(n) => write!(f, "too large ({n} bytes or more)"),
            Refused::Io(e) => write!(f, "{e}"),
        }
    }
}

/// The kind of a non-regular file, as [`Refused::NotRegular`] names it.
fn kind_of(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        "directory"
    } else if t.is_fifo() {
        "FIFO"
    } else if t.is_socket() {
        "socket"
    } else if t.is_char_device() {
        "character device"
    } else if t.is_block_device() {
        "block device"
    } else if t.is_symlink() {
        "symlink"
    } else {
        "special file"
    }
}

/// A project (or crate) root, resolved once.
#[derive(Clone, Debug)]
pub struct Root {
    real: PathBuf,
}

impl Root {
    /// `root` with its own symlinks resolved (a root may be reached through a link).
    pub fn new(root: &Path) -> io::Result<Root> {
        Ok(Root {
            real: std::fs::canonicalize(root)?,
        })
    }

    pub fn path(&self) -> &Path {
        &self.real
    }

    /// `rel` (`/`-separated, relative) joined onto the root, or `None` if it climbs out
    /// lexically or is absolute.
    pub fn join(&self, rel: &str) -> Option<PathBuf> {
        let rel = Path::new(rel);
        if rel
            .components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
        {
            return None;
        }
        Some(self.real.join(rel))
    }

    /// Where a symlink (or a path through one) at `path` leads, classified.
    fn classify_link(&self, path: &Path) -> Refused {
        match std::fs::canonicalize(path) {
            Ok(real) if real.starts_with(&self.real) => Refused::Link,
            Ok(real) => Refused::LeavesRoot(real),
            // A dangling link: not a file, whatever it names.
            Err(_) => match std::fs::read_link(path) {
                Ok(to) if to.is_absolute() && !to.starts_with(&self.real) => {
                    Refused::LeavesRoot(to)
                }
                _ => Refused::Missing,
            },
        }
    }

    /// Checks that `path` (inside the root, lexically) is a regular file whose real path
    /// is itself; `lstat` only, nothing is opened. Returns its metadata.
    pub fn check(&self, path: &Path) -> Result<Metadata, Refused> {
        if !path.starts_with(&self.real) {
            return Err(Refused::LeavesRoot(path.to_path_buf()));
        }
        let meta = match std::fs::symlink_metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(Refused::Missing),
            Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => return Err(Refused::Missing),
            Err(e) => return Err(Refused::Io(e)),
        };
        if meta.file_type().is_symlink() {
            return Err(self.classify_link(path));
        }
        if !meta.is_file() {
            return Err(Refused::NotRegular(kind_of(&meta)));
        }
        Ok(meta)
    }

    /// Reads `path` (absolute, under the root) when it is a regular file whose real path
    /// is itself, at most `cap` bytes.
    pub fn read(&self, path: &Path, cap: u64) -> Result<Vec<u8>, Refused> {
        self.check(path)?;
        let file = open_regular(path)?;
        if let Some(real) = opened_path(&file)
            && real != path
        {
            // A parent directory was a link (or became one since the check).
            return Err(if real.starts_with(&self.real) {
                Refused::Link
            } else {
                Refused::LeavesRoot(real)
            });
        }
        read_capped(file, cap)
    }

    /// [`Root::read`] of a root-relative path.
    pub fn read_rel(&self, rel: &str, cap: u64) -> Result<Vec<u8>, Refused> {
        let path = self
            .join(rel)
            .ok_or_else(|| Refused::LeavesRoot(PathBuf::from(rel)))?;
        self.read(&path, cap)
    }
}

/// Opens `path` for reading only if it is a regular file, without following a final
/// symlink and without blocking (a FIFO swapped in after a check); `fstat` decides.
pub fn open_regular(path: &Path) -> Result<File, Refused> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => Refused::Missing,
        _ => Refused::Io(e),
    })?;
    if !meta.is_file() {
        return Err(Refused::NotRegular(kind_of(&meta)));
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => Refused::NotRegular("symlink"),
            _ if e.kind() == io::ErrorKind::NotFound => Refused::Missing,
            _ => Refused::Io(e),
        })?;
    let meta = file.metadata().map_err(Refused::Io)?;
    if !meta.is_file() {
        return Err(Refused::NotRegular(kind_of(&meta)));
    }
    Ok(file)
}

/// At most `cap` bytes of `file`; [`Refused::TooLarge`] if there are more.
pub fn read_capped(file: File, cap: u64) -> Result<Vec<u8>, Refused> {
    let hint = file.metadata().map(|m| m.len()).unwrap_or(0);
    if hint > cap {
        return Err(Refused::TooLarge(hint));
    }
    let mut bytes = Vec::with_capacity(hint as usize);
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(Refused::Io)?;
    if bytes.len() as u64 > cap {
        return Err(Refused::TooLarge(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Reads a regular file at `path` (no final symlink, no special file), at most `cap`
/// bytes: for files whose place is already checked (or trusted), such as a manifest found
/// by the walk.
pub fn read_regular(path: &Path, cap: u64) -> Result<Vec<u8>, Refused> {
    read_capped(open_regular(path)?, cap)
}

/// [`read_regular`] as text (invalid UTF-8 replaced).
pub fn read_text(path: &Path, cap: u64) -> Result<String, Refused> {
    read_regular(path, cap).map(|b| match String::from_utf8(b) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

/// The real path of an open file, from `/proc/self/fd` (Linux); `None` elsewhere.
fn opened_path(file: &File) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn only_regular_files_inside_the_root_are_read() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.rs"), "pub fn secret() {}").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let p = root.path();
        std::fs::create_dir(p.join("src")).unwrap();
        std::fs::write(p.join("src/a.rs"), "fn a() {}").unwrap();
        symlink(outside.path().join("secret.rs"), p.join("src/out.rs")).unwrap();
        symlink(p.join("src/a.rs"), p.join("src/in.rs")).unwrap();
        symlink(outside.path(), p.join("linked")).unwrap();
        assert_eq!(root.read_rel("src/a.rs", 100).unwrap(), b"fn a() {}");
        assert!(matches!(
            root.read_rel("src/out.rs", 100),
            Err(Refused::LeavesRoot(_))
        ));
        assert!(matches!(
            root.read_rel("src/in.rs", 100),
            Err(Refused::Link)
        ));
        assert!(matches!(
            root.read_rel("linked/secret.rs", 100),
            Err(Refused::LeavesRoot(_))
        ));
        assert!(matches!(
            root.read_rel("src/a.rs", 3),
            Err(Refused::TooLarge(_))
        ));
        assert!(matches!(
            root.read_rel("src", 100),
            Err(Refused::NotRegular("directory"))
        ));
        assert!(matches!(
            root.read_rel("nope.rs", 100),
            Err(Refused::Missing)
        ));
        assert!(matches!(
            root.read_rel("../x.rs", 100),
            Err(Refused::LeavesRoot(_))
        ));
    }

    #[test]
    fn a_fifo_is_never_opened() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let fifo = root.path().join("pipe.rs");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(matches!(
            root.read(&fifo, 100),
            Err(Refused::NotRegular("FIFO"))
        ));
        assert!(matches!(
            open_regular(&fifo),
            Err(Refused::NotRegular("FIFO"))
        ));
    }
}
