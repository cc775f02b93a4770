//! The row index as a reader sees it: the files that cover a log's segments, checked
//! before use, and the entries of segments no sound file covers, read from the segments
//! (see [`super`]).

use std::sync::OnceLock;

use super::{Damaged, Entry, Kind, RowFile, compact, of_batches, range_of, tile, write};
use crate::log::LogError;
use crate::log::stage_log::{SegmentRef, StageLog};
use crate::store::Hash;

/// A run of segments a reader finds entries of: an index file, or their entries read into
/// memory (no file covers them, or the file failed a check).
#[derive(Debug)]
struct Part {
    first: u64,
    next: u64,
    file: Option<RowFile>,
    memory: OnceLock<Vec<Entry>>,
}

/// The row index of one log as a reader sees it: every segment of its snapshot covered.
#[derive(Debug)]
pub struct Rows {
    log: StageLog,
    refs: Vec<SegmentRef>,
    lookup: &'static [&'static str],
    parts: Vec<Part>,
}

impl Rows {
    /// The index of `refs` (the log's segments as the reader listed them), writing the
    /// files of segments none covers (best effort).
    pub fn open(
        log: &StageLog,
        refs: Vec<SegmentRef>,
        lookup: &'static [&'static str],
    ) -> Result<Self, LogError> {
        let upto = refs.len() as u64;
        let mut parts = Vec::new();
        let mut wrote = false;
        let site = log.rows_site();
        let tiles = if site.s3 { Vec::new() } else { tile(&site, upto) };
        let mut tiles = tiles.into_iter().peekable();
        let mut at = 0;
        while at < upto {
            if let Some(file) = tiles.next_if(|f| f.first == at) {
                at = file.next;
                parts.push(Part {
                    first: file.first,
                    next: file.next,
                    file: Some(file),
                    memory: OnceLock::new(),
                });
                continue;
            }
            let r = &refs[at as usize];
            let (mut found, head) = segment_entries(log, r, lookup)?;
            if !site.s3 {
                wrote |= write(&site.dir, at, at + 1, head, &mut found).is_ok();
            }
            found.sort_unstable_by_key(Entry::order);
            parts.push(Part {
                first: at,
                next: at + 1,
                file: None,
                memory: OnceLock::from(found),
            });
            at += 1;
        }
        if wrote {
            compact(&site, upto);
        }
        Ok(Self {
            log: log.clone(),
            refs,
            lookup,
            parts,
        })
    }

    /// The segments of the snapshot.
    pub fn refs(&self) -> &[SegmentRef] {
        &self.refs
    }

    /// The entries of `kind` for `key`.
    pub fn find(&self, kind: Kind, key: &Hash) -> Result<Vec<Entry>, LogError> {
        self.range((key.0, kind as u8), (key.0, kind as u8))
    }

    /// The `Event` and `Unit` entries whose key lies in `lo..=hi` (a hex prefix's range).
    pub fn prefix(&self, lo: &[u8; 32], hi: &[u8; 32]) -> Result<Vec<Entry>, LogError> {
        let mut out = self.range((*lo, Kind::Event as u8), (*hi, Kind::Unit as u8))?;
        out.retain(|e| matches!(e.kind, Kind::Event | Kind::Unit));
        Ok(out)
    }

    fn range(&self, lo: ([u8; 32], u8), hi: ([u8; 32], u8)) -> Result<Vec<Entry>, LogError> {
        let mut out = Vec::new();
        for part in &self.parts {
            if let Some(file) = part.file.as_ref().filter(|_| part.memory.get().is_none()) {
                let before = out.len();
                match file.range(lo, hi, &mut out) {
                    Ok(()) => continue,
                    Err(Damaged) => {
                        file.discard();
                        out.truncate(before);
                    }
                }
            }
            range_of(self.memory(part)?, lo, hi, &mut out);
        }
        Ok(out)
    }

    /// A part's entries read from its segments (once).
    fn memory<'a>(&self, part: &'a Part) -> Result<&'a [Entry], LogError> {
        if let Some(found) = part.memory.get() {
            return Ok(found);
        }
        let mut found = Vec::new();
        for r in &self.refs[part.first as usize..part.next as usize] {
            found.extend(segment_entries(&self.log, r, self.lookup)?.0);
        }
        found.sort_unstable_by_key(Entry::order);
        Ok(part.memory.get_or_init(|| found))
    }
}

/// The entries of one segment (read and checked as every read is), and its hash.
pub(super) fn segment_entries(
    log: &StageLog,
    r: &SegmentRef,
    lookup: &[&str],
) -> Result<(Vec<Entry>, Hash), LogError> {
    let seg = log.read(r)?;
    let columns = ["event_id", "unit_key", "upstream", "created_at"];
    let wanted: Vec<&str> = columns.iter().chain(lookup).copied().collect();
    let batches = seg
        .batches(Some(&wanted))
        .map_err(|m| LogError::damaged(&r.path, m))?;
    let out =
        of_batches(&batches, r.version, lookup).map_err(|e| LogError::damaged(&r.path, e.to_string()))?;
    Ok((out, seg.hash))
}
