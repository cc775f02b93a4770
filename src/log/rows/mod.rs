//! Where each event is: a derived, verified index from event id, unit key, upstream id and
//! lookup key to the event's place (segment version, row), so that reading one event and
//! what it names costs a few binary searches and one segment, whatever the size of the log.
//!
//! Each event of a log gives these entries:
//! - `Event`: its event id; `Unit`: its unit key;
//! - `Upstream`: its first upstream id (a grade names the execution it graded first),
//!   `LaterUpstream`: each later one;
//! - `Lookup`: the hash of the values of its body's lookup columns ([`EventBody::LOOKUP`],
//!   e.g. an execution's competition, format and code hash), by which another log's event
//!   finds it ([`lookup_key`]); none when a value is null or the column is absent (an
//!   earlier schema), as SQL's `=` matches no null.
//!
//! Every entry also holds the event's `created_at` (µs) and the first 8 bytes of its id, so
//! "the latest by `created_at`, then event id" (the views' rule) is decided without reading
//! a row; two ids that share their first 8 bytes (a 2⁻⁶⁴ chance) are ordered by place.
//!
//! On disk, `store/index/<stage>/rows/{first:020}-{next:020}.rows` covers the segments
//! `first..next`, the last of which has hash `head` (integers little-endian):
//! ```text
//! "ml2b-rows/1\n" | first: u64 | next: u64 | head: [u8; 32] | count: u64 | blocks: u64
//! | blake3 of each block: blocks × [u8; 32] | each block's first key and kind: blocks × [u8; 33]
//! | blake3 of all the above: [u8; 32]
//! | count entries, sorted by (key, kind, version, row), in blocks of 1024, each 56 bytes:
//!   key: [u8; 32] | created_at: i64 | id prefix: [u8; 8] | version: u32 | kind << 29 | row: u32
//! ```
//! A commit writes its segment's file, and eight consecutive files of one size (the
//! segments they cover, a power of 8) are merged into one: a log of n segments has O(log n)
//! files and an entry is rewritten O(log n) times. A file is written to a temporary name and
//! renamed into place, without `fsync`: a torn file fails its checks and is written again.
//!
//! Invariant: an index is a cache, checked before use and never trusted blindly. Opening a
//! file checks its header checksum and its head against the log (segment `next - 1` is the
//! object `head` names: the same file, or the same hash, whose parents fix every earlier
//! segment); a lookup finds its block by the first keys of the header (a binary search)
//! and checks that block's checksum the first time it reads it. A file that
//! fails is removed and the segments it covered are read instead, so deleting the folder
//! only costs one read of the log; a reader that finds segments no file covers writes their
//! files. An S3 store keeps no index files: a reader reads every segment's key columns.
//! `ml2b verify` checks every file against the segments and rebuilds the index.
//!
//! This file holds the format, the writes (a commit's, a merge's, verification's) and the
//! checks, on a log's [`Site`] (its folders and objects); [`reader`] is the index as a reader
//! of the log sees it.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::DataType;
use memmap2::Mmap;

pub mod reader;

use super::segment::segment_name;
use super::{LogError, event};
use crate::store::{Hash, KeyHasher, Objects, hash_file, same_file};

/// The folder of a log's row index, below `store/index/<stage>/`.
pub const ROWS_DIR: &str = "rows";

const MAGIC: &[u8; 12] = b"ml2b-rows/1\n";
const FIXED: usize = 12 + 8 + 8 + 32 + 8 + 8;
/// A block's first key and kind.
const FENCE: usize = 33;
const ENTRY: usize = 56;
const BLOCK: usize = 1024;
const FANOUT: u64 = 8;
const ROW_BITS: u32 = 29;

/// What an entry's key is to its event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Kind {
    Event = 0,
    Unit = 1,
    Upstream = 2,
    LaterUpstream = 3,
    Lookup = 4,
}

impl Kind {
    fn from_bits(bits: u32) -> Option<Self> {
        [
            Self::Event,
            Self::Unit,
            Self::Upstream,
            Self::LaterUpstream,
            Self::Lookup,
        ]
        .into_iter()
        .find(|k| *k as u32 == bits)
    }
}

/// One entry: a key of an event and where the event is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub key: Hash,
    pub kind: Kind,
    /// The event's `created_at`, µs since the epoch.
    pub created_at: i64,
    /// The first 8 bytes of the event's id.
    pub id_prefix: [u8; 8],
    /// The segment's version and the event's row in it.
    pub version: u64,
    pub row: u32,
}

impl Entry {
    /// The order of the file: key, kind, place.
    fn order(&self) -> ([u8; 32], Kind, u64, u32) {
        (self.key.0, self.kind, self.version, self.row)
    }

    /// The order of "latest": `created_at`, then event id, then place (oldest first).
    pub fn age(&self) -> (i64, [u8; 8], u64, u32) {
        (self.created_at, self.id_prefix, self.version, self.row)
    }

    /// The event's place in its log.
    pub fn place(&self) -> (u64, u32) {
        (self.version, self.row)
    }

    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.key.0);
        out.extend_from_slice(&self.created_at.to_le_bytes());
        out.extend_from_slice(&self.id_prefix);
        out.extend_from_slice(&(self.version as u32).to_le_bytes());
        out.extend_from_slice(&(((self.kind as u32) << ROW_BITS) | self.row).to_le_bytes());
    }

    fn decode(b: &[u8]) -> Option<Self> {
        let u32_at = |i: usize| {
            b.get(i..i + 4)
                .and_then(|s| s.try_into().ok())
                .map(u32::from_le_bytes)
        };
        let packed = u32_at(52)?;
        Some(Self {
            key: Hash(b.get(..32)?.try_into().ok()?),
            created_at: i64::from_le_bytes(b.get(32..40)?.try_into().ok()?),
            id_prefix: b.get(40..48)?.try_into().ok()?,
            version: u64::from(u32_at(48)?),
            kind: Kind::from_bits(packed >> ROW_BITS)?,
            row: packed & ((1 << ROW_BITS) - 1),
        })
    }
}

/// The keys (inclusive) a hex prefix of an id or unit key spans: the prefix followed by
/// all `0`s, and by all `f`s (`None` unless it is 1 to 64 hex digits).
pub fn prefix_range(prefix: &str) -> Option<([u8; 32], [u8; 32])> {
    if prefix.is_empty() || prefix.len() > 64 {
        return None;
    }
    let pad = |digit: char| -> Option<[u8; 32]> {
        let hex: String = prefix.chars().chain(std::iter::repeat(digit)).take(64).collect();
        hex.parse::<Hash>().ok().map(|h| h.0)
    };
    Some((pad('0')?, pad('f')?))
}

/// The key of a lookup: the values of the lookup columns, as text, in their order.
pub fn lookup_key(values: &[&str]) -> Hash {
    let mut k = KeyHasher::new("ml2b-rows/lookup");
    k.u64(values.len() as u64);
    for v in values {
        k.str(v);
    }
    k.finish()
}

/// The entries of the events of `batch`, rows `first_row..` of segment `version`.
pub fn entries(
    batch: &RecordBatch,
    version: u64,
    first_row: u32,
    lookup: &[&str],
) -> Result<Vec<Entry>, LogError> {
    let ids = event::hashes(batch, "event_id")?;
    let units = event::hashes(batch, "unit_key")?;
    let upstream = event::upstream(batch)?;
    let times = event::created_micros(batch)?;
    let lookups = lookup_columns(batch, lookup)?;
    let mut out = Vec::with_capacity(ids.len() * 4);
    for (i, id) in ids.iter().enumerate() {
        let row = first_row
            .checked_add(i as u32)
            .filter(|r| *r < 1 << ROW_BITS)
            .ok_or_else(|| LogError::Column(format!("row {i} (a segment of over 2^29 rows)")))?;
        let entry = |key: Hash, kind: Kind| Entry {
            key,
            kind,
            created_at: times[i],
            id_prefix: id.0[..8].try_into().expect("8 bytes"),
            version,
            row,
        };
        out.push(entry(*id, Kind::Event));
        out.push(entry(units[i], Kind::Unit));
        for (n, up) in upstream[i].iter().enumerate() {
            out.push(entry(
                *up,
                if n == 0 {
                    Kind::Upstream
                } else {
                    Kind::LaterUpstream
                },
            ));
        }
        if let Some(key) = lookup_of(&lookups, i) {
            out.push(entry(key, Kind::Lookup));
        }
    }
    Ok(out)
}

/// The lookup columns as text; none when the segment lacks one (an earlier schema).
fn lookup_columns(
    batch: &RecordBatch,
    lookup: &[&str],
) -> Result<Option<Vec<arrow::array::ArrayRef>>, LogError> {
    if lookup.is_empty() {
        return Ok(None);
    }
    let mut out = Vec::new();
    for name in lookup {
        let Some(col) = batch.column_by_name(name) else {
            return Ok(None);
        };
        out.push(arrow::compute::cast(col, &DataType::Utf8)?);
    }
    Ok(Some(out))
}

fn lookup_of(columns: &Option<Vec<arrow::array::ArrayRef>>, i: usize) -> Option<Hash> {
    let columns = columns.as_ref()?;
    let mut values = Vec::with_capacity(columns.len());
    for c in columns {
        if c.is_null(i) {
            return None;
        }
        values.push(c.as_string::<i32>().value(i));
    }
    Some(lookup_key(&values))
}

/// A block's check: not yet made, passed, failed.
const UNCHECKED: u8 = 0;
const PASSED: u8 = 1;
const FAILED: u8 = 2;

/// An index file whose header is checked, its blocks checked as they are read.
#[derive(Debug)]
struct RowFile {
    path: PathBuf,
    map: Mmap,
    first: u64,
    next: u64,
    head: Hash,
    count: usize,
    /// Offset of the first entry.
    start: usize,
    checked: Vec<AtomicU8>,
}

/// A block of an index file failed its checksum.
#[derive(Debug)]
struct Damaged;

impl RowFile {
    /// Opens a file and checks its header; `None` if it is not a whole, valid index.
    fn open(path: &Path) -> Option<Self> {
        let file = fs::File::open(path).ok()?;
        // SAFETY: index files are written once to a temporary name and renamed into place,
        // never modified; every block is checked against its checksum before it is used.
        let map = unsafe { Mmap::map(&file) }.ok()?;
        let u64_at = |i: usize| {
            map.get(i..i + 8)
                .and_then(|s| s.try_into().ok())
                .map(u64::from_le_bytes)
        };
        if map.get(..12)? != MAGIC {
            return None;
        }
        let (first, next) = (u64_at(12)?, u64_at(20)?);
        let head = Hash(map.get(28..60)?.try_into().ok()?);
        let (count, blocks) = (
            usize::try_from(u64_at(60)?).ok()?,
            usize::try_from(u64_at(68)?).ok()?,
        );
        let start = FIXED
            .checked_add(blocks.checked_mul(32 + FENCE)?)?
            .checked_add(32)?;
        if blocks != count.div_ceil(BLOCK) || map.len() != start.checked_add(count.checked_mul(ENTRY)?)? {
            return None;
        }
        if blake3::hash(&map[..start - 32]).as_bytes() != &map[start - 32..start] || first >= next {
            return None;
        }
        let checked = (0..blocks).map(|_| AtomicU8::new(UNCHECKED)).collect();
        Some(Self {
            path: path.to_path_buf(),
            map,
            first,
            next,
            head,
            count,
            start,
            checked,
        })
    }

    fn block(&self, b: usize) -> Result<(), Damaged> {
        match self.checked[b].load(Ordering::Relaxed) {
            PASSED => return Ok(()),
            FAILED => return Err(Damaged),
            _ => {}
        }
        let from = self.start + b * BLOCK * ENTRY;
        let to = (from + BLOCK * ENTRY).min(self.map.len());
        let expected = &self.map[FIXED + 32 * b..FIXED + 32 * (b + 1)];
        let ok = blake3::hash(&self.map[from..to]).as_bytes() == expected;
        self.checked[b].store(if ok { PASSED } else { FAILED }, Ordering::Relaxed);
        if ok { Ok(()) } else { Err(Damaged) }
    }

    fn entry(&self, i: usize) -> Result<Entry, Damaged> {
        self.block(i / BLOCK)?;
        let at = self.start + i * ENTRY;
        Entry::decode(&self.map[at..at + ENTRY]).ok_or(Damaged)
    }

    /// Block `b`'s first key and kind (from the checked header).
    fn fence(&self, b: usize) -> (&[u8], u8) {
        let at = FIXED + 32 * self.checked.len() + FENCE * b;
        (&self.map[at..at + 32], self.map[at + 32])
    }

    /// The first index whose (key, kind) is not below `(key, kind)`: the header's first keys
    /// name the block, one block is searched.
    fn lower_bound(&self, key: &[u8; 32], kind: u8) -> Result<usize, Damaged> {
        let (mut lo, mut hi) = (0, self.checked.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.fence(mid) < (&key[..], kind) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        // Blocks `..lo` start below the target: the answer is in block `lo - 1`, or starts `lo`.
        let Some(block) = lo.checked_sub(1) else {
            return Ok(0);
        };
        let (mut lo, mut hi) = (block * BLOCK, (lo * BLOCK).min(self.count));
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let e = self.entry(mid)?;
            if (&e.key.0, e.kind as u8) < (key, kind) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok(lo)
    }

    /// The entries whose (key, kind) lies in `lo..=hi`.
    fn range(&self, lo: ([u8; 32], u8), hi: ([u8; 32], u8), out: &mut Vec<Entry>) -> Result<(), Damaged> {
        let mut i = self.lower_bound(&lo.0, lo.1)?;
        while i < self.count {
            let e = self.entry(i)?;
            if (e.key.0, e.kind as u8) > hi {
                break;
            }
            out.push(e);
            i += 1;
        }
        Ok(())
    }

    /// Every entry, every block checked.
    fn all(&self) -> Result<Vec<Entry>, Damaged> {
        (0..self.count).map(|i| self.entry(i)).collect()
    }

    /// Removes the file (best effort: it is a cache).
    fn discard(&self) {
        tracing::warn!("ignoring the damaged row index {}", self.path.display());
        let _ = fs::remove_file(&self.path);
    }
}

/// The entries of sorted memory whose (key, kind) lies in `lo..=hi`.
fn range_of(sorted: &[Entry], lo: ([u8; 32], u8), hi: ([u8; 32], u8), out: &mut Vec<Entry>) {
    let start = sorted.partition_point(|e| (e.key.0, e.kind as u8) < lo);
    out.extend(
        sorted[start..]
            .iter()
            .take_while(|e| (e.key.0, e.kind as u8) <= hi),
    );
}

/// Where a log's row index lives and what it is checked against (a log's
/// `StageLog::rows_site`).
pub struct Site<'a> {
    pub stage: &'a str,
    /// `store/index/<stage>/rows`.
    pub dir: PathBuf,
    /// The log's folder.
    pub log: PathBuf,
    pub objects: &'a Objects,
    /// An S3 store, which keeps no index files.
    pub s3: bool,
}

/// The files in the index folder, by their names' ranges.
fn listed(site: &Site) -> Vec<(u64, u64, PathBuf)> {
    let Ok(read) = fs::read_dir(&site.dir) else {
        return Vec::new();
    };
    let mut out: Vec<(u64, u64, PathBuf)> = read
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_str()?.strip_suffix(".rows")?.to_string();
            let (first, next) = name.split_once('-')?;
            Some((first.parse().ok()?, next.parse().ok()?, e.path()))
        })
        .collect();
    out.sort_by_key(|(first, next, _)| (*first, std::cmp::Reverse(*next)));
    out
}

/// Whether a file's head is segment `next - 1` of the log: the same file as the object it
/// names, or the same bytes.
fn heads(site: &Site, next: u64, head: &Hash) -> bool {
    let segment = site.log.join(segment_name(next - 1));
    let object = site.objects.path(head);
    same_file(&segment, &object).unwrap_or(false) || hash_file(&segment).is_ok_and(|h| h == *head)
}

/// The valid files that cover segments `0..` of `log` one after the other, as far as they
/// go below `upto` (each the widest that starts where the previous ends), skipping what
/// none covers.
fn tile(site: &Site, upto: u64) -> Vec<RowFile> {
    let listed = listed(site);
    let mut out = Vec::new();
    let mut at = 0;
    while at < upto {
        let mut chosen = None;
        for (first, next, path) in listed.iter().filter(|(f, n, _)| *f == at && *n <= upto) {
            match RowFile::open(path) {
                Some(f) if (f.first, f.next) == (*first, *next) && heads(site, f.next, &f.head) => {
                    chosen = Some(f);
                    break;
                }
                _ => {
                    tracing::warn!("removing the stale or damaged row index {}", path.display());
                    let _ = fs::remove_file(path);
                }
            }
        }
        match chosen {
            Some(file) => {
                at = file.next;
                out.push(file);
            }
            None => {
                at = listed
                    .iter()
                    .map(|(f, _, _)| *f)
                    .filter(|f| *f > at)
                    .min()
                    .unwrap_or(upto);
            }
        }
    }
    out
}

/// After a commit of `batch` as segment `version` with hash `hash`: writes its index file
/// and merges (best effort, logged: the index is a cache).
pub(crate) fn committed(site: &Site, version: u64, hash: Hash, batch: &RecordBatch, lookup: &[&str]) {
    if site.s3 {
        return;
    }
    let written = entries(batch, version, 0, lookup).and_then(|mut found| {
        write(&site.dir, version, version + 1, hash, &mut found).map_err(|e| LogError::io(&site.dir, e))
    });
    match written {
        Ok(_) => compact(site, version + 1),
        Err(e) => tracing::debug!("no row index for segment {version} of {}: {e}", site.stage),
    }
}

/// Writes the file of `found` covering `first..next`, whose last segment is `head`.
fn write(dir: &Path, first: u64, next: u64, head: Hash, found: &mut [Entry]) -> io::Result<PathBuf> {
    if next > u64::from(u32::MAX) {
        return Err(io::Error::other("segment versions past 2^32 are not indexed"));
    }
    found.sort_unstable_by_key(Entry::order);
    let mut body = Vec::with_capacity(found.len() * ENTRY);
    for e in found.iter() {
        e.encode(&mut body);
    }
    let mut header = Vec::with_capacity(FIXED + (32 + FENCE) * found.len().div_ceil(BLOCK) + 32);
    header.extend_from_slice(MAGIC);
    for n in [first, next] {
        header.extend_from_slice(&n.to_le_bytes());
    }
    header.extend_from_slice(&head.0);
    header.extend_from_slice(&(found.len() as u64).to_le_bytes());
    header.extend_from_slice(&(found.len().div_ceil(BLOCK) as u64).to_le_bytes());
    for block in body.chunks(BLOCK * ENTRY) {
        header.extend_from_slice(blake3::hash(block).as_bytes());
    }
    for block in found.chunks(BLOCK) {
        header.extend_from_slice(&block[0].key.0);
        header.push(block[0].kind as u8);
    }
    let sum = blake3::hash(&header);
    header.extend_from_slice(sum.as_bytes());
    fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(&header)?;
    tmp.write_all(&body)?;
    let path = dir.join(format!("{first:020}-{next:020}.rows"));
    tmp.persist(&path).map_err(|e| e.error)?;
    Ok(path)
}

/// How many segments a file covers, as a power of [`FANOUT`].
fn tier(file: &RowFile) -> u32 {
    (file.next - file.first).ilog(FANOUT)
}

/// Merges every run of [`FANOUT`] consecutive files of one tier below `upto`, and removes
/// the files the merged ones cover (best effort; each merge leaves one file fewer, and a
/// log of 2⁶⁴ segments has fewer than 8 × 22 files, so 256 rounds end it).
fn compact(site: &Site, upto: u64) {
    for _ in 0..256 {
        let tiles = tile(site, upto);
        let run = tiles.windows(FANOUT as usize).find(|w| {
            w.iter().all(|f| tier(f) == tier(&w[0])) && w.windows(2).all(|p| p[0].next == p[1].first)
        });
        let Some(run) = run else {
            prune(site, &tiles);
            return;
        };
        let mut found = Vec::new();
        for f in run {
            match f.all() {
                Ok(entries) => found.extend(entries),
                Err(Damaged) => {
                    f.discard();
                    return;
                }
            }
        }
        let last = &run[run.len() - 1];
        if let Err(e) = write(&site.dir, run[0].first, last.next, last.head, &mut found) {
            tracing::debug!("cannot merge the row index in {}: {e}", site.dir.display());
            return;
        }
    }
}

/// Removes the files inside a range a tile covers, but not the tiles.
fn prune(site: &Site, tiles: &[RowFile]) {
    for (first, next, path) in listed(site) {
        let inside = tiles
            .iter()
            .any(|t| t.first <= first && next <= t.next && (t.first, t.next) != (first, next));
        if inside {
            let _ = fs::remove_file(path);
        }
    }
}

/// What `ml2b verify` found of a log's row index.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Checked {
    /// Files read whole and found to hold their segments' entries.
    pub sound: u64,
    /// Files removed: damaged, stale, or not their segments' entries.
    pub removed: Vec<PathBuf>,
    /// Whether a file covering the whole log was written.
    pub rebuilt: bool,
}

/// Checks every index file of `log` against `segments` (each segment's entries, in version
/// order, from a full read of the log), removes the ones that fail, and leaves one file
/// covering the whole log.
pub fn check(site: &Site, segments: &[Vec<Entry>]) -> io::Result<Checked> {
    let mut out = Checked::default();
    if site.s3 {
        return Ok(out);
    }
    let upto = segments.len() as u64;
    let expected = |first: u64, next: u64| -> Vec<Entry> {
        let mut all: Vec<Entry> = segments[first as usize..next as usize].concat();
        all.sort_unstable_by_key(Entry::order);
        all
    };
    let mut whole = false;
    for (first, next, path) in listed(site) {
        let sound = next <= upto
            && RowFile::open(&path)
                .filter(|f| (f.first, f.next) == (first, next) && heads(site, next, &f.head))
                .and_then(|f| f.all().ok())
                .is_some_and(|found| found == expected(first, next));
        if sound {
            out.sound += 1;
            whole |= (first, next) == (0, upto);
        } else {
            fs::remove_file(&path)?;
            out.removed.push(path);
        }
    }
    if !whole && upto > 0 {
        let head = hash_file(&site.log.join(segment_name(upto - 1)))?;
        write(&site.dir, 0, upto, head, &mut expected(0, upto))?;
        out.rebuilt = true;
    }
    let tiles = tile(site, upto);
    prune(site, &tiles);
    Ok(out)
}

/// The entries of segment `version`, whose rows are `batches` in order.
pub fn of_batches(batches: &[RecordBatch], version: u64, lookup: &[&str]) -> Result<Vec<Entry>, LogError> {
    let mut out = Vec::new();
    let mut row = 0u32;
    for b in batches {
        out.extend(entries(b, version, row, lookup)?);
        row += b.num_rows() as u32;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::reader::Rows;
    use super::*;
    use crate::log::{Event, EventBody, Provenance, StageLog, unit_key};
    use crate::store::Store;

    #[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Probe {
        name: String,
        n: u64,
    }

    impl EventBody for Probe {
        const STAGE: &'static str = "probe";
        const SCHEMA_VERSION: u32 = 1;
        const LOOKUP: &'static [&'static str] = &["name"];
    }

    fn probe(n: u64, upstream: Vec<Hash>) -> Event<Probe> {
        let body = Probe {
            name: format!("p{}", n % 3),
            n,
        };
        let key = unit_key("probe", 1, &[], &n).unwrap();
        Event::new(key, upstream, body, Provenance::now(0)).unwrap()
    }

    /// A log of `segments` segments of two events each; returns it and its events.
    fn log_of(store: &Store, segments: u64) -> (StageLog, Vec<Event<Probe>>) {
        let log = StageLog::new(store, "probe").unwrap();
        let mut view = log.view().unwrap();
        let mut all = Vec::new();
        for s in 0..segments {
            let up = vec![Hash::of(&s.to_le_bytes()), Hash::of(b"shared")];
            let events = vec![probe(2 * s, up.clone()), probe(2 * s + 1, vec![])];
            log.commit(&mut view, events.clone(), None).unwrap();
            all.extend(events);
        }
        (log, all)
    }

    /// A log of `segments` segments in a store of its own (kept while the folder lives).
    fn logged(segments: u64) -> (tempfile::TempDir, StageLog, Vec<Event<Probe>>) {
        let dir = tempfile::tempdir().unwrap();
        let (log, events) = log_of(&Store::open(dir.path()), segments);
        (dir, log, events)
    }

    fn open(log: &StageLog) -> Rows {
        Rows::open(log, log.list().unwrap(), Probe::LOOKUP).unwrap()
    }

    fn names(log: &StageLog) -> Vec<String> {
        let mut names: Vec<String> = listed(&log.rows_site())
            .into_iter()
            .map(|(_, _, p)| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn places(found: Vec<Entry>) -> Vec<(u64, u32)> {
        let mut out: Vec<(u64, u32)> = found.iter().map(Entry::place).collect();
        out.sort();
        out
    }

    #[test]
    fn every_key_of_an_event_finds_its_place() {
        let (_dir, log, events) = logged(3);
        let rows = open(&log);
        let third = &events[2];
        assert_eq!(places(rows.find(Kind::Event, &third.id).unwrap()), vec![(1, 0)]);
        assert_eq!(
            places(rows.find(Kind::Unit, &third.unit_key).unwrap()),
            vec![(1, 0)]
        );
        let first_up = Hash::of(&1u64.to_le_bytes());
        assert_eq!(
            places(rows.find(Kind::Upstream, &first_up).unwrap()),
            vec![(1, 0)]
        );
        let shared = Hash::of(b"shared");
        assert_eq!(
            places(rows.find(Kind::LaterUpstream, &shared).unwrap()),
            vec![(0, 0), (1, 0), (2, 0)]
        );
        assert!(rows.find(Kind::Upstream, &shared).unwrap().is_empty());
        // name = p{n % 3}: p1 is events 1 and 4.
        let p1 = lookup_key(&["p1"]);
        assert_eq!(
            places(rows.find(Kind::Lookup, &p1).unwrap()),
            vec![(0, 1), (2, 0)]
        );
        let e = rows.find(Kind::Event, &third.id).unwrap()[0];
        assert_eq!(e.created_at, third.provenance.created_at.timestamp_micros());
        assert_eq!(e.id_prefix, third.id.0[..8]);
    }

    #[test]
    fn a_prefix_is_a_range_of_ids_and_unit_keys() {
        let (_dir, log, events) = logged(2);
        let rows = open(&log);
        let e = &events[3];
        let hex = e.id.to_hex();
        let (lo, hi) = prefix_range(&hex[..5]).unwrap();
        let found = rows.prefix(&lo, &hi).unwrap();
        assert!(
            found.iter().any(|f| f.kind == Kind::Event && f.key == e.id),
            "{found:?}"
        );
        assert!(found.iter().all(|f| f.key.to_hex().starts_with(&hex[..5])));
        let everything = rows.prefix(&[0; 32], &[0xff; 32]).unwrap();
        assert_eq!(everything.len(), 2 * events.len(), "an id and a unit key each");
    }

    #[test]
    fn commits_write_files_that_merge_eight_at_a_time() {
        let (_dir, log, events) = logged(17);
        assert_eq!(
            names(&log),
            vec![
                format!("{:020}-{:020}.rows", 0, 8),
                format!("{:020}-{:020}.rows", 8, 16),
                format!("{:020}-{:020}.rows", 16, 17),
            ]
        );
        let rows = open(&log);
        for (i, e) in events.iter().enumerate() {
            let expected = ((i / 2) as u64, (i % 2) as u32);
            assert_eq!(places(rows.find(Kind::Event, &e.id).unwrap()), vec![expected]);
        }
    }

    #[test]
    fn a_reader_writes_what_is_missing_and_reads_past_what_is_damaged() {
        let (_dir, log, events) = logged(9);
        fs::remove_dir_all(log.rows_site().dir).unwrap();
        let rows = open(&log);
        assert_eq!(
            places(rows.find(Kind::Event, &events[17].id).unwrap()),
            vec![(8, 1)]
        );
        drop(rows);
        assert_eq!(names(&log).len(), 2, "{:?}", names(&log));
        // Damage an entry of the merged file: its block fails, the segments are read instead.
        let merged = log.rows_site().dir.join(format!("{:020}-{:020}.rows", 0, 8));
        let mut bytes = fs::read(&merged).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
        fs::write(&merged, bytes).unwrap();
        let rows = open(&log);
        for (i, e) in events.iter().enumerate() {
            let expected = ((i / 2) as u64, (i % 2) as u32);
            assert_eq!(places(rows.find(Kind::Event, &e.id).unwrap()), vec![expected]);
        }
        assert!(!merged.exists(), "the damaged file is removed");
    }

    #[test]
    fn a_file_whose_head_is_not_the_log_is_ignored() {
        let (_dir, log, events) = logged(1);
        let path = log.rows_site().dir.join(format!("{:020}-{:020}.rows", 0, 1));
        let mut wrong = vec![Entry {
            key: Hash::of(b"not here"),
            kind: Kind::Event,
            created_at: 0,
            id_prefix: [0; 8],
            version: 0,
            row: 0,
        }];
        write(
            &log.rows_site().dir,
            0,
            1,
            Hash::of(b"another segment"),
            &mut wrong,
        )
        .unwrap();
        let rows = open(&log);
        assert_eq!(
            places(rows.find(Kind::Event, &events[1].id).unwrap()),
            vec![(0, 1)]
        );
        assert!(rows.find(Kind::Event, &Hash::of(b"not here")).unwrap().is_empty());
        assert!(
            RowFile::open(&path).is_some_and(|f| heads(&log.rows_site(), 1, &f.head)),
            "rewritten"
        );
    }

    #[test]
    fn verification_removes_what_is_wrong_and_leaves_one_file() {
        let (_dir, log, _) = logged(10);
        let segments: Vec<Vec<Entry>> = log
            .list()
            .unwrap()
            .iter()
            .map(|r| reader::segment_entries(&log, r, Probe::LOOKUP).unwrap().0)
            .collect();
        // A file with the right head but an entry too few.
        let mut short: Vec<Entry> = segments[9].clone();
        short.pop();
        let head = log.check(&log.list().unwrap()[9]).unwrap();
        let wrong = write(&log.rows_site().dir, 9, 10, head, &mut short).unwrap();
        let checked = check(&log.rows_site(), &segments).unwrap();
        assert_eq!(checked.removed, vec![wrong]);
        assert!(checked.rebuilt);
        assert_eq!(names(&log), vec![format!("{:020}-{:020}.rows", 0, 10)]);
        let again = check(&log.rows_site(), &segments).unwrap();
        assert_eq!((again.sound, again.removed.len(), again.rebuilt), (1, 0, false));
    }

    #[test]
    fn a_file_of_many_blocks_finds_what_memory_finds() {
        let dir = tempfile::tempdir().unwrap();
        // 5,000 entries over 2,000 keys: runs of one key cross block boundaries.
        let mut all: Vec<Entry> = (0..5_000u32)
            .map(|i| Entry {
                key: Hash::of(&(i % 2_000).to_le_bytes()),
                kind: [Kind::Event, Kind::Unit, Kind::Lookup][(i % 3) as usize],
                created_at: i64::from(i),
                id_prefix: [0; 8],
                version: u64::from(i / 7),
                row: i,
            })
            .collect();
        let path = write(dir.path(), 0, 1, Hash::of(b"head"), &mut all).unwrap();
        let file = RowFile::open(&path).unwrap();
        assert_eq!(file.checked.len(), 5);
        for i in (0..2_100u32).step_by(7) {
            let key = Hash::of(&i.to_le_bytes()).0;
            for kind in [Kind::Event, Kind::Unit, Kind::Lookup] {
                let (mut in_file, mut in_memory) = (Vec::new(), Vec::new());
                file.range((key, kind as u8), (key, kind as u8), &mut in_file)
                    .unwrap();
                range_of(&all, (key, kind as u8), (key, kind as u8), &mut in_memory);
                assert_eq!(in_file, in_memory, "key {i}, {kind:?}");
            }
        }
        let (mut everything, mut memory) = (Vec::new(), Vec::new());
        file.range(([0; 32], 0), ([0xff; 32], 0xff), &mut everything)
            .unwrap();
        range_of(&all, ([0; 32], 0), ([0xff; 32], 0xff), &mut memory);
        assert_eq!((everything.len(), everything == memory), (5_000, true));
    }

    #[test]
    fn entries_round_trip_their_bytes() {
        let e = Entry {
            key: Hash::of(b"k"),
            kind: Kind::Lookup,
            created_at: -5,
            id_prefix: [7; 8],
            version: 123_456,
            row: (1 << ROW_BITS) - 1,
        };
        let mut bytes = Vec::new();
        e.encode(&mut bytes);
        assert_eq!(bytes.len(), ENTRY);
        assert_eq!(Entry::decode(&bytes), Some(e));
    }
}
