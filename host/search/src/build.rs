//! Building a [`SymbolIndex`]: in memory as one segment, or in a directory as segments
//! cut by memory, on the caller's thread or by worker threads taking consecutive chunks
//! of the documents.
//!
//! Architecture invariant: however a directory's index is built, its segments are listed
//! in the order their documents were added, so a document's address orders as its place
//! in the stream did and score ties list the same way. BM25 statistics are the whole
//! index's whatever the segments, so scores are the same too.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use tantivy::directory::RamDirectory;
use tantivy::{Index, IndexMeta, SegmentMeta, SingleSegmentIndexWriter, TantivyDocument};

use crate::{
    Fields, MAX_NAME_BYTES, Result, SearchDoc, SearchError, SymbolIndex, WRITER_MEMORY,
    module_part, normalize_crate_name, schema, tokenizers, tokens,
};

/// The writer's own memory count at which an on-disk build writes its segment out and
/// starts the next. It bounds the build of a large crate: windows-sys in one in-memory
/// segment raised the process's peak by ~120 MiB. tantivy counts 10.5–13.6 MB for an
/// empty writer's tables, whatever budget it is given, so a lower cut writes a segment
/// every few documents (docs/learnings/memory.md, 2026-12-01 evening).
const DISK_SEGMENT_MEMORY: usize = 15_000_000;

/// Documents a worker of a threaded build takes at a time: about one memory-cut
/// segment's worth (8–14k of the monorepo's definitions), so chunks add few segments.
/// Three chunks are held at once (one per worker and the one being filled): chunks of
/// 40,000 raised the monorepo's peak by ~150 MB (docs/learnings/scale.md, stop 36).
const CHUNK_DOCS: usize = 12_000;

/// The smallest piece the last chunk is split into between the workers
/// ([`Threaded::send_tail`]): below it a second segment costs more than it saves.
const TAIL_PIECE_DOCS: usize = 2_000;

/// How an index is written. Every writer here is a one-segment writer on the thread that
/// feeds it: tantivy's threaded writer starts and ends threads of its own per index, and
/// with 160 crate indexes built the memory those threads used stayed resident in the
/// heaps they left behind (docs/learnings/memory.md, 2026-12-01).
enum Writer {
    /// One segment in memory.
    Ram(SingleSegmentIndexWriter<TantivyDocument>),
    /// Segments written to a directory on the caller's thread.
    Disk(Segments),
    /// Chunks of documents written to a directory by worker threads.
    Threaded(Threaded),
}

/// Builds a [`SymbolIndex`] one document at a time, so a large corpus can be streamed
/// in without being held whole.
pub struct SymbolIndexBuilder {
    writer: Writer,
    fields: Fields,
    count: u64,
    /// Tests cut an on-disk index into segments of this many documents, as a corpus
    /// larger than the writer's memory is cut.
    #[cfg(test)]
    pub(crate) segment_docs: Option<u64>,
}

impl SymbolIndexBuilder {
    /// A builder of an index held in memory, as one segment.
    pub fn new() -> Result<SymbolIndexBuilder> {
        let writer = Index::builder()
            .schema(schema().0)
            .tokenizers(tokenizers())
            .single_segment_index_writer(RamDirectory::create(), WRITER_MEMORY)?;
        Ok(Self::with(Writer::Ram(writer)))
    }

    /// A builder of an index kept in `dir` (an existing, empty directory), read back
    /// through memory maps; see [`stored`](crate::stored) for keeping one across runs. A
    /// large corpus is cut into segments, so its build holds a bounded amount of memory;
    /// BM25 statistics are still the whole index's.
    pub fn in_directory(dir: &Path) -> Result<SymbolIndexBuilder> {
        Ok(Self::with(Writer::Disk(Segments::new(dir)?)))
    }

    /// [`in_directory`](Self::in_directory), with the documents indexed by `threads`
    /// worker threads (one or none: on the caller's thread) while the caller adds more.
    /// Each worker holds a segment writer of its own, so the build's memory grows with
    /// the threads; the index answers exactly as one built on one thread.
    pub fn in_directory_on(dir: &Path, threads: usize) -> Result<SymbolIndexBuilder> {
        if threads <= 1 {
            return Self::in_directory(dir);
        }
        Ok(Self::with(Writer::Threaded(Threaded::start(
            dir,
            threads,
            CHUNK_DOCS,
            TAIL_PIECE_DOCS,
        )?)))
    }

    fn with(writer: Writer) -> SymbolIndexBuilder {
        SymbolIndexBuilder {
            writer,
            fields: schema().1,
            count: 0,
            #[cfg(test)]
            segment_docs: None,
        }
    }

    /// A threaded build handing out chunks of `chunk` documents, its last one split in
    /// pieces of at least `tail_piece` (tests: small chunks).
    #[cfg(test)]
    pub(crate) fn threaded_in(
        dir: &Path,
        threads: usize,
        chunk: usize,
        tail_piece: usize,
    ) -> SymbolIndexBuilder {
        Self::with(Writer::Threaded(
            Threaded::start(dir, threads, chunk, tail_piece).unwrap(),
        ))
    }

    pub fn add(&mut self, d: SearchDoc) -> Result<()> {
        let doc = self.document(&d);
        #[cfg(test)]
        let cut = self
            .segment_docs
            .is_some_and(|n| (self.count + 1).is_multiple_of(n));
        #[cfg(not(test))]
        let cut = false;
        match &mut self.writer {
            Writer::Ram(w) => w.add_document(doc)?,
            Writer::Disk(segments) => segments.add(doc, cut)?,
            Writer::Threaded(t) => t.add(doc)?,
        }
        self.count += 1;
        Ok(())
    }

    fn document(&self, d: &SearchDoc) -> TantivyDocument {
        let fields = self.fields;
        let mut doc = TantivyDocument::default();
        doc.add_u64(fields.key, d.key);
        doc.add_text(fields.name, &d.name);
        doc.add_text(fields.module, module_part(&d.qualified_name, &d.name));
        doc.add_text(fields.signature, &d.signature);
        if let Some(ds) = &d.docstring {
            doc.add_text(fields.docstring, ds);
        }
        doc.add_text(fields.kind, &d.kind);
        let exact = tokens::compact(&d.name);
        if !exact.is_empty() {
            doc.add_text(fields.exact, exact);
            if d.name.len() <= MAX_NAME_BYTES {
                doc.add_text(fields.exact_case, &d.name);
            }
        }
        if let Some(c) = &d.crate_name {
            let c = normalize_crate_name(c);
            doc.add_text(fields.krate, &c);
            if let Some(v) = &d.crate_version {
                doc.add_text(fields.krate, format!("{c}@{}", v.trim()));
            }
        }
        doc
    }

    /// Documents added so far.
    pub fn len(&self) -> u64 {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    pub fn finish(self) -> Result<SymbolIndex> {
        let fields = self.fields;
        let index = match self.writer {
            Writer::Ram(w) => w.finalize()?,
            Writer::Disk(segments) => {
                let dir = segments.dir.clone();
                segments.write_meta()?;
                Index::open_in_dir(&dir)?
            }
            Writer::Threaded(t) => {
                let dir = t.dir.clone();
                t.write_meta()?;
                Index::open_in_dir(&dir)?
            }
        };
        SymbolIndex::from_index(index, fields)
    }

    /// Writes the index out and leaves it closed: for one in a directory, which
    /// [`stored`](crate::stored) moves into place before anything opens it.
    pub fn close(self) -> Result<()> {
        match self.writer {
            Writer::Ram(w) => drop(w.finalize()?),
            Writer::Disk(segments) => segments.write_meta()?,
            Writer::Threaded(t) => t.write_meta()?,
        }
        Ok(())
    }
}

/// Segments written to `dir`, each cut when [`DISK_SEGMENT_MEMORY`] is used up; the
/// written ones are listed in `done`.
struct Segments {
    dir: PathBuf,
    current: SingleSegmentIndexWriter<TantivyDocument>,
    done: Vec<SegmentMeta>,
}

impl Segments {
    fn new(dir: &Path) -> Result<Segments> {
        Ok(Segments {
            dir: dir.to_path_buf(),
            current: segment_writer_in(dir)?,
            done: Vec::new(),
        })
    }

    /// Adds `doc`, then writes the segment out if it is full (or `cut`).
    fn add(&mut self, doc: TantivyDocument, cut: bool) -> Result<()> {
        self.current.add_document(doc)?;
        if cut || self.current.mem_usage() >= DISK_SEGMENT_MEMORY {
            let next = segment_writer_in(&self.dir)?;
            let full = std::mem::replace(&mut self.current, next);
            cut_segment(&self.dir, full, &mut self.done)?;
        }
        Ok(())
    }

    /// Writes the last segment: the index's meta (as its writer wrote it) and every
    /// non-empty segment, in order. No `meta.json` is left in the directory.
    fn finish(self) -> Result<(IndexMeta, Vec<SegmentMeta>)> {
        let mut done = self.done;
        let meta = cut_segment(&self.dir, self.current, &mut done)?;
        // A corpus that filled its last segment exactly leaves that one empty.
        done.retain(|s| s.max_doc() > 0);
        Ok((meta, done))
    }

    /// Writes the last segment and one `meta.json` naming them all.
    fn write_meta(self) -> Result<()> {
        let dir = self.dir.clone();
        let (meta, segments) = self.finish()?;
        write_meta(&dir, meta, segments)
    }
}

fn segment_writer_in(dir: &Path) -> Result<SingleSegmentIndexWriter<TantivyDocument>> {
    let directory = tantivy::directory::MmapDirectory::open(dir)
        .map_err(|e| SearchError::Index(format!("opening {}: {e}", dir.display())))?;
    Ok(Index::builder()
        .schema(schema().0)
        .tokenizers(tokenizers())
        .single_segment_index_writer(directory, DISK_SEGMENT_MEMORY)?)
}

/// Writes the segment being built in `dir` and makes room for the next one: a
/// one-segment writer writes a `meta.json` naming only its segment, and will not start
/// where one exists.
fn cut_segment(
    dir: &Path,
    writer: SingleSegmentIndexWriter<TantivyDocument>,
    done: &mut Vec<SegmentMeta>,
) -> Result<IndexMeta> {
    let meta = writer.finalize()?.load_metas()?;
    done.extend(meta.segments.iter().cloned());
    std::fs::remove_file(dir.join("meta.json"))?;
    Ok(meta)
}

/// Writes `meta` listing `segments` as `dir`'s `meta.json`.
fn write_meta(dir: &Path, mut meta: IndexMeta, segments: Vec<SegmentMeta>) -> Result<()> {
    meta.segments = segments;
    let json = serde_json::to_vec(&meta)
        .map_err(|e| SearchError::Index(format!("writing the index meta: {e}")))?;
    // Written whole, then moved into place: a reader never sees half of it.
    let partial = dir.join("meta.json.partial");
    std::fs::write(&partial, json)?;
    std::fs::File::open(&partial)?.sync_all()?;
    std::fs::rename(&partial, dir.join("meta.json"))?;
    Ok(())
}

/// One chunk's result: its place in the stream, the meta its writer wrote and its
/// segments (moved into the index's directory).
type ChunkDone = (usize, IndexMeta, Vec<SegmentMeta>);

/// A build whose documents are handed out in chunks, in order, to worker threads. Each
/// chunk is written as segments of its own in a directory of its own, then its files are
/// moved into the index's directory; the meta lists the chunks' segments in chunk order.
struct Threaded {
    dir: PathBuf,
    chunk_docs: usize,
    /// [`TAIL_PIECE_DOCS`] (tests: smaller).
    tail_piece_docs: usize,
    chunk: Vec<TantivyDocument>,
    sent: usize,
    /// `None` once closed, so the workers end.
    chunks: Option<SyncSender<(usize, Vec<TantivyDocument>)>>,
    workers: Vec<JoinHandle<Result<Vec<ChunkDone>>>>,
}

impl Threaded {
    fn start(
        dir: &Path,
        threads: usize,
        chunk_docs: usize,
        tail_piece_docs: usize,
    ) -> Result<Threaded> {
        // A chunk is handed over only to a worker ready to take it: the caller runs
        // ahead of the workers by the one chunk it fills, so memory is bounded.
        let (tx, rx) = sync_channel::<(usize, Vec<TantivyDocument>)>(0);
        let rx = Arc::new(Mutex::new(rx));
        let mut workers = Vec::with_capacity(threads);
        for n in 0..threads {
            let (dir, rx) = (dir.to_path_buf(), rx.clone());
            let worker = std::thread::Builder::new()
                .name(format!("search-build-{n}"))
                .spawn(move || write_chunks(&dir, &rx))?;
            workers.push(worker);
        }
        Ok(Threaded {
            dir: dir.to_path_buf(),
            chunk_docs,
            tail_piece_docs: tail_piece_docs.max(1),
            chunk: Vec::with_capacity(chunk_docs),
            sent: 0,
            chunks: Some(tx),
            workers,
        })
    }

    fn add(&mut self, doc: TantivyDocument) -> Result<()> {
        self.chunk.push(doc);
        if self.chunk.len() >= self.chunk_docs {
            self.send()?;
        }
        Ok(())
    }

    fn send(&mut self) -> Result<()> {
        let chunk = std::mem::replace(&mut self.chunk, Vec::with_capacity(self.chunk_docs));
        self.send_docs(chunk)
    }

    /// Sends the last, partly filled chunk in up to one piece per worker, each of at least
    /// [`TAIL_PIECE_DOCS`], so the workers write it together. An index smaller than a
    /// chunk (tokio's ~10,000 definitions) was otherwise written by one worker while the
    /// other waited, the last thing an index run does (docs/learnings/scale.md, stop 46).
    fn send_tail(&mut self) -> Result<()> {
        let mut tail = std::mem::take(&mut self.chunk);
        let pieces = (tail.len() / self.tail_piece_docs).clamp(1, self.workers.len().max(1));
        let per_piece = tail.len().div_ceil(pieces);
        let mut rest = tail.split_off(per_piece.min(tail.len()));
        self.send_docs(tail)?;
        while !rest.is_empty() {
            let next = rest.split_off(per_piece.min(rest.len()));
            self.send_docs(std::mem::replace(&mut rest, next))?;
        }
        Ok(())
    }

    fn send_docs(&mut self, chunk: Vec<TantivyDocument>) -> Result<()> {
        let sent = self
            .chunks
            .as_ref()
            .is_some_and(|tx| tx.send((self.sent, chunk)).is_ok());
        if !sent {
            // Every worker stopped: the first one's error says why.
            return Err(self
                .join()
                .err()
                .unwrap_or_else(|| SearchError::Index("the index's workers stopped".into())));
        }
        self.sent += 1;
        Ok(())
    }

    /// Ends the workers and gathers their chunks, in order.
    fn join(&mut self) -> Result<Vec<ChunkDone>> {
        self.chunks = None;
        let mut all = Vec::new();
        let mut failed = None;
        for worker in self.workers.drain(..) {
            match worker.join() {
                Ok(Ok(done)) => all.extend(done),
                Ok(Err(e)) => failed = failed.or(Some(e)),
                Err(_) => {
                    failed = failed.or(Some(SearchError::Index("an index worker panicked".into())))
                }
            }
        }
        if let Some(e) = failed {
            return Err(e);
        }
        all.sort_by_key(|(n, _, _)| *n);
        Ok(all)
    }

    /// Sends the last chunk, waits for the workers and writes one `meta.json` listing
    /// every chunk's segments in chunk order.
    fn write_meta(mut self) -> Result<()> {
        if self.sent == 0 && self.chunk.is_empty() {
            // No documents: an index that matches nothing, written as one thread would.
            self.join()?;
            return Segments::new(&self.dir)?.write_meta();
        }
        if !self.chunk.is_empty() {
            self.send_tail()?;
        }
        let chunks = self.join()?;
        let mut meta = None;
        let mut segments = Vec::new();
        for (_, chunk_meta, chunk_segments) in chunks {
            meta.get_or_insert(chunk_meta);
            segments.extend(chunk_segments);
        }
        let meta = meta.ok_or_else(|| SearchError::Index("no chunk was written".into()))?;
        write_meta(&self.dir, meta, segments)
    }
}

impl Drop for Threaded {
    /// A build given up (a failed fill) still waits for its workers, so none writes into
    /// a directory its caller is about to remove.
    fn drop(&mut self) {
        let _ = self.join();
    }
}

/// A worker: writes each chunk it takes into `dir/chunk-N`, moves the segments' files
/// into `dir`, and returns what it wrote.
fn write_chunks(
    dir: &Path,
    chunks: &Mutex<Receiver<(usize, Vec<TantivyDocument>)>>,
) -> Result<Vec<ChunkDone>> {
    let mut done = Vec::new();
    loop {
        // The lock is held only while taking a chunk.
        let next = chunks
            .lock()
            .map_err(|_| SearchError::Index("an index worker panicked".into()))?
            .recv();
        let Ok((n, docs)) = next else {
            return Ok(done);
        };
        let chunk_dir = dir.join(format!("chunk-{n}"));
        std::fs::create_dir(&chunk_dir)?;
        let mut segments = Segments::new(&chunk_dir)?;
        for doc in docs {
            segments.add(doc, false)?;
        }
        let (meta, written) = segments.finish()?;
        move_segment_files(&chunk_dir, dir, &written)?;
        std::fs::remove_dir_all(&chunk_dir)?;
        done.push((n, meta, written));
    }
}

/// Moves the files of `segments` (named by their ids) from `from` into `to`.
fn move_segment_files(from: &Path, to: &Path, segments: &[SegmentMeta]) -> Result<()> {
    let ids: Vec<String> = segments.iter().map(|s| s.id().uuid_string()).collect();
    for entry in std::fs::read_dir(from)? {
        let name = entry?.file_name();
        let text = name.to_string_lossy();
        if ids.iter().any(|id| text.starts_with(id.as_str())) {
            std::fs::rename(from.join(&name), to.join(&name))?;
        }
    }
    Ok(())
}
