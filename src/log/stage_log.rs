//! One stage's log: listing, reading and committing segments.
//!
//! Commit protocol (optimistic, any number of concurrent writers):
//! ```text
//!  encode events with parent = head hash, seq = head seq + 1
//!        │
//!  objects.put(bytes) ──► objects/blake3/ab/cd/<rest>     (temp → fsync → rename)
//!        │
//!  link(object, log/<stage>/{seq:020}.parquet)           (put-if-absent)
//!        ├─ ok ────► fsync(log dir); committed
//!        ├─ exists, and the file there is our object (same inode or same hash)
//!        │   ─────► committed: a lost acknowledgement (a link retried over NFS
//!        │          reports EEXIST after its first try succeeded)
//!        └─ exists ► read the segments committed since, verify their chain,
//!                    add their unit keys to the writer's view, retry at the new head
//!                    with the events whose units are still uncommitted
//! ```
//! Readers list only the published names; a staging file or an orphan object
//! from a lost race is never visible. Every read re-hashes the segment and
//! requires its hash to name an existing object, so a damaged or replaced
//! segment is refused rather than read.
//!
//! On an S3 store the link is a create-if-absent PUT of the segment's bytes at the same
//! key (`crate::store::s3`: "exists" with our bytes is our commit, a lost acknowledgement),
//! and no key index is kept: a view reads the unit keys of every segment.

use std::collections::HashSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::RecordBatch;
use bytes::Bytes;
use chrono::Utc;

use super::LogError;
use super::event::{self, Event, EventBody, host_name};
use super::index::{self, KeyIndex};
use super::segment::{self, SegmentBytes, SegmentMeta, SlurmTask, parse_segment_name, segment_name};
use crate::store::s3::Created;
use crate::store::{Hash, LOG_DIR, Store, hash_file, same_file, sync_dir};

/// A committed segment's place in its log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentRef {
    pub version: u64,
    pub path: PathBuf,
}

/// The last committed segment as a writer saw it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Head {
    /// Number of committed segments (the next version to write).
    pub next: u64,
    /// Hash of the last segment, if any.
    pub hash: Option<Hash>,
}

/// Folder of the derived key indexes, beside `log/`.
pub const INDEX_DIR: &str = "index";

/// Segments from this size on are memory-mapped when read.
const MAP_FROM: u64 = 4 << 20;

/// Keys read past the newest index before a new index is written.
const REINDEX_MIN: usize = 50_000;

/// A writer's view of a log: its head and every unit key committed up to it.
///
/// The keys are a verified [`KeyIndex`] of older segments plus a set of the
/// keys committed after it.
#[derive(Clone, Debug, Default)]
pub struct View {
    pub head: Head,
    base: Option<Arc<KeyIndex>>,
    recent: HashSet<Hash>,
}

impl View {
    /// Whether the unit is committed.
    pub fn contains(&self, key: &Hash) -> bool {
        self.recent.contains(key) || self.base.as_ref().is_some_and(|b| b.contains(key))
    }

    /// Number of committed units.
    pub fn len(&self) -> usize {
        self.recent.len() + self.base.as_ref().map_or(0, |b| b.len())
    }

    /// Whether no unit is committed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Removes events whose units are known or repeated; returns how many.
fn drop_known<B>(events: &mut Vec<Event<B>>, view: &View) -> u64 {
    let before = events.len();
    let mut seen = HashSet::new();
    events.retain(|e| !view.contains(&e.unit_key) && seen.insert(e.unit_key));
    (before - events.len()) as u64
}

/// A successful commit.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Committed {
    pub version: u64,
    pub hash: Hash,
    pub events: u64,
    /// Events dropped because a concurrent writer committed their units first.
    pub duplicates: u64,
}

/// One stage's log directory.
#[derive(Clone, Debug)]
pub struct StageLog {
    store: Store,
    stage: String,
    dir: PathBuf,
    /// Put-if-absent publication of an object under a version name: `fs::hard_link`, or in
    /// a test a link whose acknowledgement is lost.
    link: LinkFn,
}

/// `link(object, target)`: creates `target` as a hard link to `object`, `AlreadyExists`
/// when `target` exists.
pub type LinkFn = fn(&Path, &Path) -> io::Result<()>;

/// What a put-if-absent publication found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Published {
    /// The version name is our segment now.
    Ours,
    /// Another writer's segment holds it.
    Taken,
}

/// Links `object` (whose hash is `hash`) to `target`; on "exists", the segment at
/// `target` is ours when it is the same file or has the same hash (a lost acknowledgement).
fn publish(link: LinkFn, object: &Path, hash: &Hash, target: &Path) -> io::Result<Published> {
    match link(object, target) {
        Ok(()) => Ok(Published::Ours),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            if same_file(object, target)? || hash_file(target)? == *hash {
                tracing::info!(
                    "{} exists and is our segment: a lost acknowledgement",
                    target.display()
                );
                Ok(Published::Ours)
            } else {
                Ok(Published::Taken)
            }
        }
        Err(e) => Err(e),
    }
}

/// Checks a stage name: `[a-z0-9_]+`.
pub fn check_stage_name(stage: &str) -> Result<(), LogError> {
    let ok = !stage.is_empty()
        && stage
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(LogError::StageName(stage.to_string()))
    }
}

impl StageLog {
    /// The log of `stage` in `store`.
    pub fn new(store: &Store, stage: &str) -> Result<Self, LogError> {
        check_stage_name(stage)?;
        Ok(Self {
            store: store.clone(),
            stage: stage.to_string(),
            dir: store.log_dir(stage),
            link: |object, target| fs::hard_link(object, target),
        })
    }

    /// The same log, publishing with `link` (a test's lost acknowledgement).
    pub fn with_link(self, link: LinkFn) -> Self {
        Self { link, ..self }
    }

    /// The store the log is in.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Whether the log is in an S3 store (which keeps no derived index).
    pub fn is_s3(&self) -> bool {
        self.store.is_s3()
    }

    /// The stage's name.
    pub fn stage(&self) -> &str {
        &self.stage
    }

    /// The log's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The key of version `v` below an S3 store's prefix.
    fn key(&self, v: u64) -> String {
        format!("{LOG_DIR}/{}/{}", self.stage, segment_name(v))
    }

    /// Committed segments in version order, without checking for gaps.
    pub fn list_raw(&self) -> Result<Vec<SegmentRef>, LogError> {
        let mut refs: Vec<SegmentRef> = self
            .names()?
            .iter()
            .filter_map(|name| {
                parse_segment_name(name).map(|version| SegmentRef {
                    version,
                    path: self.dir.join(name),
                })
            })
            .collect();
        refs.sort_by_key(|r| r.version);
        Ok(refs)
    }

    /// The names in the log's folder.
    fn names(&self) -> Result<Vec<String>, LogError> {
        if let Some(s3) = self.store.s3() {
            return Ok(s3.list_files(&format!("{LOG_DIR}/{}", self.stage))?);
        }
        let entries = match fs::read_dir(&self.dir) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            other => other.map_err(|e| LogError::io(&self.dir, e))?,
        };
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| LogError::io(&self.dir, e))?;
            if let Some(name) = entry.file_name().to_str() {
                names.push(name.to_string());
            }
        }
        Ok(names)
    }

    /// A segment's bytes, unchecked: a large file is memory-mapped rather than copied (a
    /// segment is never modified in place: it is published once under its name).
    fn bytes(&self, r: &SegmentRef) -> Result<Bytes, LogError> {
        if let Some(s3) = self.store.s3() {
            return Ok(s3.get_required(&self.key(r.version))?);
        }
        let io = |e| LogError::io(&r.path, e);
        let file = fs::File::open(&r.path).map_err(io)?;
        if file.metadata().map_err(io)?.len() < MAP_FROM {
            let mut bytes = Vec::new();
            io::Read::read_to_end(&mut &file, &mut bytes).map_err(io)?;
            return Ok(Bytes::from(bytes));
        }
        // SAFETY: a published segment is a hard link to an object, written once and never
        // modified; its hash is checked after this read, so a change is refused, not used.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
        Ok(Bytes::from_owner(map))
    }

    /// Committed segments in version order; a missing version is an error.
    pub fn list(&self) -> Result<Vec<SegmentRef>, LogError> {
        let refs = self.list_raw()?;
        match first_gap(&refs) {
            Some(missing) => Err(LogError::Gap {
                path: self.dir.join(segment_name(missing)),
            }),
            None => Ok(refs),
        }
    }

    /// Reads one segment and checks that its hash names a committed object.
    pub fn read(&self, r: &SegmentRef) -> Result<SegmentBytes, LogError> {
        let bytes = self.bytes(r)?;
        let hash = self.require_committed(&r.path, Hash::of(&bytes))?;
        Ok(SegmentBytes { hash, bytes })
    }

    /// Re-hashes a segment on disk without keeping it; returns its hash.
    pub fn check(&self, r: &SegmentRef) -> Result<Hash, LogError> {
        if self.store.s3().is_some() {
            return self.read(r).map(|seg| seg.hash);
        }
        let hash = hash_file(&r.path).map_err(|e| LogError::io(&r.path, e))?;
        self.require_committed(&r.path, hash)
    }

    fn require_committed(&self, path: &Path, hash: Hash) -> Result<Hash, LogError> {
        if self.store.objects().exists(&hash)? {
            return Ok(hash);
        }
        Err(LogError::damaged(
            path,
            format!(
                "its content (hash {}) is not the content that was committed",
                hash.short()
            ),
        ))
    }

    /// Reads a segment and its metadata, checking it belongs here.
    pub fn read_with_meta(&self, r: &SegmentRef) -> Result<(SegmentBytes, SegmentMeta), LogError> {
        let seg = self.read(r)?;
        let meta = seg.meta().map_err(|m| LogError::damaged(&r.path, m))?;
        self.check_name(r, &meta)?;
        Ok((seg, meta))
    }

    /// Re-hashes a segment and reads its metadata from its footer, without decoding a
    /// row, checking it belongs here; returns its hash and metadata.
    pub fn check_with_meta(&self, r: &SegmentRef) -> Result<(Hash, SegmentMeta), LogError> {
        if self.store.s3().is_some() {
            let (seg, meta) = self.read_with_meta(r)?;
            return Ok((seg.hash, meta));
        }
        let hash = self.check(r)?;
        let file = fs::File::open(&r.path).map_err(|e| LogError::io(&r.path, e))?;
        let meta = segment::read_meta(file).map_err(|m| LogError::damaged(&r.path, m))?;
        self.check_name(r, &meta)?;
        Ok((hash, meta))
    }

    /// A segment is published under the version and in the log its metadata names: a
    /// segment copied to another version or into another stage's log is refused.
    fn check_name(&self, r: &SegmentRef, meta: &SegmentMeta) -> Result<(), LogError> {
        if meta.stage == self.stage && meta.seq == r.version {
            return Ok(());
        }
        Err(LogError::damaged(
            &r.path,
            format!("it says it is version {} of stage `{}`", meta.seq, meta.stage),
        ))
    }

    /// Every committed segment, in order, after the checks a read makes (contiguous
    /// versions, content committed, name and stage as the metadata says, the hash chain),
    /// without decoding a row: what a reader that hands the files to another engine
    /// (`crate::query`) checks first.
    pub fn checked(&self) -> Result<Vec<SegmentRef>, LogError> {
        let refs = self.list()?;
        let mut prev = None;
        for r in &refs {
            let (hash, meta) = self.check_with_meta(r)?;
            check_parent(r, prev, meta.parent)?;
            prev = Some(hash);
        }
        Ok(refs)
    }

    /// The current head, verifying the last segment.
    pub fn head(&self) -> Result<Head, LogError> {
        let refs = self.list()?;
        match refs.last() {
            None => Ok(Head::default()),
            Some(last) => Ok(Head {
                next: last.version + 1,
                hash: Some(self.read(last)?.hash),
            }),
        }
    }

    /// Reads the events of versions `from..` (all of them from 0), checking the chain.
    pub fn read_events<B: EventBody>(&self, from: u64) -> Result<Vec<Event<B>>, LogError> {
        self.read_range(from, u64::MAX)
    }

    /// The fold (latest event per unit) of versions `from..`, checking the chain.
    pub fn state<B: EventBody>(&self, from: u64) -> Result<super::State<B>, LogError> {
        let mut state = super::State::default();
        state.apply(self.read_events::<B>(from)?);
        Ok(state)
    }

    /// Reads the events of versions `from..to`, checking the chain.
    pub fn read_range<B: EventBody>(&self, from: u64, to: u64) -> Result<Vec<Event<B>>, LogError> {
        let mut out = Vec::new();
        self.for_each_segment(from..to, None, |seg, _, path| {
            for batch in seg.batches(None).map_err(|m| LogError::damaged(path, m))? {
                out.extend(
                    event::from_batch::<B>(&batch).map_err(|e| LogError::damaged(path, e.to_string()))?,
                );
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// Reads every event with the schema version its segment was written with
    /// (`ml2b.stage_version`), checking the chain: a segment of an earlier version reads as
    /// today's body, its newer columns empty, and a re-derivation hashes it as it was.
    pub fn read_versioned<B: EventBody>(&self) -> Result<Vec<(u32, Event<B>)>, LogError> {
        let mut out = Vec::new();
        self.for_each_segment(0..u64::MAX, None, |seg, meta, path| {
            for batch in seg.batches(None).map_err(|m| LogError::damaged(path, m))? {
                let events =
                    event::from_batch::<B>(&batch).map_err(|e| LogError::damaged(path, e.to_string()))?;
                out.extend(events.into_iter().map(|e| (meta.stage_version, e)));
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// The unit keys committed in versions `from..`.
    pub fn unit_keys(&self, from: u64, parent: Option<Hash>) -> Result<(HashSet<Hash>, Head), LogError> {
        let mut keys = HashSet::new();
        let head = self.for_each_segment(from..u64::MAX, parent, |seg, _, path| {
            for batch in seg
                .batches(Some(&["unit_key"]))
                .map_err(|m| LogError::damaged(path, m))?
            {
                keys.extend(
                    event::hashes(&batch, "unit_key").map_err(|e| LogError::damaged(path, e.to_string()))?,
                );
            }
            Ok(())
        })?;
        Ok((keys, head))
    }

    /// Visits the segments in `range` in order, checking each one's parent link.
    ///
    /// `parent` is the hash segment `range.start` must name; when it is `None`
    /// and the range does not start at 0, the previous segment is read to learn it.
    fn for_each_segment(
        &self,
        range: std::ops::Range<u64>,
        parent: Option<Hash>,
        mut visit: impl FnMut(&SegmentBytes, &SegmentMeta, &Path) -> Result<(), LogError>,
    ) -> Result<Head, LogError> {
        let refs = self.list()?;
        let from = range.start;
        let mut prev = match (from, parent) {
            (0, _) => None,
            (_, Some(p)) => Some(p),
            (v, None) => {
                let r = refs.get((v - 1) as usize).ok_or_else(|| LogError::Gap {
                    path: self.dir.join(segment_name(v - 1)),
                })?;
                Some(self.read(r)?.hash)
            }
        };
        for r in refs.iter().filter(|r| range.contains(&r.version)) {
            let (seg, meta) = self.read_with_meta(r)?;
            check_parent(r, prev, meta.parent)?;
            visit(&seg, &meta, &r.path)?;
            prev = Some(seg.hash);
        }
        let next = refs
            .iter()
            .rfind(|r| range.contains(&r.version))
            .map_or(from, |r| r.version + 1);
        Ok(Head { next, hash: prev })
    }

    /// A writer's view of the log as it is now.
    ///
    /// Reads only the segments after the newest valid key index, and writes a
    /// new index when that tail has grown large, so the cost follows what was
    /// committed since the last index rather than the size of the log.
    pub fn view(&self) -> Result<View, LogError> {
        let base = if self.store.is_s3() {
            None
        } else {
            self.load_index()?
        };
        let (from, parent) = base.as_ref().map_or((0, None), |b| (b.next, Some(b.head)));
        let (recent, head) = self.unit_keys(from, parent)?;
        let view = View {
            head,
            base: base.map(Arc::new),
            recent,
        };
        self.maybe_reindex(view)
    }

    fn index_dir(&self) -> PathBuf {
        self.store.root().join(INDEX_DIR).join(&self.stage)
    }

    /// Where the log's row index lives and what it is checked against.
    pub fn rows_site(&self) -> super::rows::Site<'_> {
        super::rows::Site {
            stage: &self.stage,
            dir: self.index_dir().join(super::rows::ROWS_DIR),
            log: self.dir.clone(),
            objects: self.store.objects(),
            s3: self.store.is_s3(),
        }
    }

    /// The newest index that matches this log, if any.
    fn load_index(&self) -> Result<Option<KeyIndex>, LogError> {
        let refs = self.list()?;
        for (next, path) in index::candidates(&self.index_dir()) {
            let Some(last) = next.checked_sub(1).and_then(|v| refs.get(v as usize)) else {
                continue;
            };
            match KeyIndex::open(&path) {
                Ok(Some(idx)) if idx.next == next && Some(idx.head) == self.check(last).ok() => {
                    return Ok(Some(idx));
                }
                _ => tracing::warn!("ignoring stale or damaged key index {}", path.display()),
            }
        }
        Ok(None)
    }

    fn maybe_reindex(&self, view: View) -> Result<View, LogError> {
        let indexed = view.base.as_ref().map_or(0, |b| b.len());
        let Some(head) = view.head.hash.filter(|_| !self.store.is_s3()) else {
            return Ok(view);
        };
        if view.recent.len() < REINDEX_MIN.max(indexed / 8) {
            return Ok(view);
        }
        let dir = self.index_dir();
        let written = index::write(&dir, view.head.next, head, view.base.as_deref(), &view.recent)
            .and_then(|path| KeyIndex::open(&path));
        match written {
            Ok(Some(idx)) => {
                index::prune(&dir, idx.next);
                Ok(View {
                    head: view.head,
                    base: Some(Arc::new(idx)),
                    recent: HashSet::new(),
                })
            }
            _ => {
                tracing::warn!("could not write a key index in {}", dir.display());
                Ok(view)
            }
        }
    }

    /// Catches `view` up with segments committed since it was taken.
    pub fn refresh(&self, view: &mut View) -> Result<(), LogError> {
        let (theirs, head) = self.unit_keys(view.head.next, view.head.hash)?;
        view.recent.extend(theirs);
        view.head = head;
        Ok(())
    }

    /// Commits `events` after `view`'s head, resolving races (see the module docs).
    ///
    /// Events whose unit keys the view already holds — committed earlier, or by
    /// a concurrent writer that won a race — are dropped, as are repeats within
    /// `events`; `None` means nothing was left. On return `view` includes the
    /// new segment.
    pub fn commit<B: EventBody>(
        &self,
        view: &mut View,
        mut events: Vec<Event<B>>,
        config: Option<Hash>,
    ) -> Result<Option<Committed>, LogError> {
        let mut duplicates = 0;
        if !self.store.is_s3() {
            fs::create_dir_all(&self.dir).map_err(|e| LogError::io(&self.dir, e))?;
        }
        loop {
            duplicates += drop_known(&mut events, view);
            if events.is_empty() {
                return Ok(None);
            }
            if let Some((hash, batch)) = self.try_publish(&view.head, &events, config)? {
                let version = view.head.next;
                super::rows::committed(&self.rows_site(), version, hash, &batch, B::LOOKUP);
                view.head = Head {
                    next: version + 1,
                    hash: Some(hash),
                };
                view.recent.extend(events.iter().map(|e| e.unit_key));
                let n = events.len() as u64;
                return Ok(Some(Committed {
                    version,
                    hash,
                    events: n,
                    duplicates,
                }));
            }
            self.refresh(view)?;
        }
    }

    /// One publish attempt: the segment's hash and rows, or `None` when the version was
    /// taken.
    fn try_publish<B: EventBody>(
        &self,
        head: &Head,
        events: &[Event<B>],
        config: Option<Hash>,
    ) -> Result<Option<(Hash, RecordBatch)>, LogError> {
        let meta = SegmentMeta {
            stage: self.stage.clone(),
            stage_version: B::SCHEMA_VERSION,
            seq: head.next,
            parent: head.hash,
            config,
            ml2b_version: env!("CARGO_PKG_VERSION").to_string(),
            created_at: Utc::now(),
            host: host_name(),
            events: events.len() as u64,
            slurm: SlurmTask::from_env(),
        };
        let batch = event::to_batch(events)?;
        let bytes = segment::encode(&batch, &meta)?;
        let hash = self.store.objects().put(&bytes)?;
        if let Some(s3) = self.store.s3() {
            return match s3.create(&self.key(head.next), Bytes::from(bytes))? {
                Created::Ours => Ok(Some((hash, batch))),
                Created::Taken => Ok(None),
            };
        }
        let target = self.dir.join(segment_name(head.next));
        let object = self.store.objects().path(&hash);
        match publish(self.link, &object, &hash, &target).map_err(|e| LogError::io(&target, e))? {
            Published::Ours => {
                sync_dir(&self.dir).map_err(|e| LogError::io(&self.dir, e))?;
                Ok(Some((hash, batch)))
            }
            Published::Taken => Ok(None),
        }
    }
}

/// A segment names the previous one (`expected`, none for version 0) as its parent.
fn check_parent(r: &SegmentRef, expected: Option<Hash>, found: Option<Hash>) -> Result<(), LogError> {
    if expected == found {
        return Ok(());
    }
    Err(LogError::BrokenChain {
        path: r.path.clone(),
        expected,
        found,
    })
}

/// The first missing version in a sorted list, if any.
pub fn first_gap(refs: &[SegmentRef]) -> Option<u64> {
    refs.iter()
        .enumerate()
        .find(|(i, r)| r.version != *i as u64)
        .map(|(i, _)| i as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::Provenance;

    #[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Tick {
        n: u64,
    }

    impl EventBody for Tick {
        const STAGE: &'static str = "tick";
        const SCHEMA_VERSION: u32 = 1;
    }

    fn ticks(range: std::ops::Range<u64>) -> Vec<Event<Tick>> {
        range
            .map(|n| {
                let key = event::unit_key("tick", 1, &[], &n).unwrap();
                Event::new(key, vec![], Tick { n }, Provenance::now(0)).unwrap()
            })
            .collect()
    }

    /// A hard link that succeeds and then reports "exists", as a link retried over NFS
    /// after a lost reply does.
    fn link_then_lose_the_ack(object: &Path, target: &Path) -> io::Result<()> {
        fs::hard_link(object, target)?;
        Err(io::Error::from(io::ErrorKind::AlreadyExists))
    }

    #[test]
    fn a_lost_acknowledgement_counts_as_our_commit() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path());
        let log = StageLog::new(&store, "tick")
            .unwrap()
            .with_link(link_then_lose_the_ack);
        let mut view = log.view().unwrap();
        let committed = log.commit(&mut view, ticks(0..5), None).unwrap().unwrap();
        assert_eq!(
            (committed.version, committed.events, committed.duplicates),
            (0, 5, 0)
        );
        assert_eq!(view.head.next, 1);
        assert_eq!(
            log.list().unwrap().len(),
            1,
            "one segment, not a retry at version 1"
        );
        assert_eq!(log.read_events::<Tick>(0).unwrap().len(), 5);
        assert_eq!(log.head().unwrap().hash, Some(committed.hash));
    }

    #[test]
    fn another_segment_at_the_version_still_loses_the_race() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path());
        let lossy = StageLog::new(&store, "tick")
            .unwrap()
            .with_link(link_then_lose_the_ack);
        let mut stale = lossy.view().unwrap();
        // Another writer takes version 0 first (an ordinary link).
        let other = StageLog::new(&store, "tick").unwrap();
        let mut view = other.view().unwrap();
        let theirs = other.commit(&mut view, ticks(0..3), None).unwrap().unwrap();
        assert_eq!(theirs.version, 0);
        // Ours, from the stale view: "exists" at 0 is theirs, so retry at 1, where the
        // acknowledgement is lost again but the segment is ours.
        let ours = lossy.commit(&mut stale, ticks(2..6), None).unwrap().unwrap();
        assert_eq!((ours.version, ours.events, ours.duplicates), (1, 3, 1));
        assert_eq!(lossy.list().unwrap().len(), 2);
        let events = lossy.read_events::<Tick>(0).unwrap();
        let keys: HashSet<Hash> = events.iter().map(|e| e.unit_key).collect();
        assert_eq!((events.len(), keys.len()), (6, 6), "no unit key twice");
    }
}
