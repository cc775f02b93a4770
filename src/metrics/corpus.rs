//! Shape checks for a parallel corpus: one hypothesis stream and one or more
//! reference streams, segment i of every stream aligned.
//!
//! Invariant: unlike sacreBLEU's `corpus_score`, which `zip`s the streams and
//! silently drops the tail of the longer one, every stream must have exactly
//! as many segments as the hypotheses; anything else is a [`CorpusError`].

/// The streams of a corpus do not line up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CorpusError {
    /// There are no hypotheses.
    #[error("the corpus has no segments")]
    Empty,
    /// There is no reference stream.
    #[error("no reference stream was given")]
    NoReferences,
    /// A reference stream's length differs from the hypotheses'.
    #[error("reference stream {stream} has {refs} segments but there are {hyps} hypotheses")]
    LengthMismatch {
        /// 0-based index of the offending reference stream.
        stream: usize,
        /// Number of hypothesis segments.
        hyps: usize,
        /// Number of segments in that reference stream.
        refs: usize,
    },
}

/// Checks that `refs` holds at least one stream, each as long as `hyps`.
pub fn check_streams<S: AsRef<str>, R: AsRef<[S]>>(hyps: &[S], refs: &[R]) -> Result<(), CorpusError> {
    if hyps.is_empty() {
        return Err(CorpusError::Empty);
    }
    if refs.is_empty() {
        return Err(CorpusError::NoReferences);
    }
    for (stream, r) in refs.iter().enumerate() {
        let len = r.as_ref().len();
        if len != hyps.len() {
            return Err(CorpusError::LengthMismatch {
                stream,
                hyps: hyps.len(),
                refs: len,
            });
        }
    }
    Ok(())
}

/// The references of segment `i`, one per stream.
pub fn segment_refs<'a, S: AsRef<str> + 'a, R: AsRef<[S]>>(refs: &'a [R], i: usize) -> Vec<&'a str> {
    refs.iter().map(|r| r.as_ref()[i].as_ref()).collect()
}

/// Below this many segments the work is not split across threads.
const PARALLEL_MIN_SEGMENTS: usize = 2_048;

/// `(0..n).map(f).collect()`, computed on all available cores in contiguous
/// chunks; the result is in index order, so sums over it are deterministic.
pub fn map_segments<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    if threads == 1 || n < PARALLEL_MIN_SEGMENTS {
        return (0..n).map(f).collect();
    }
    let chunk = n.div_ceil(threads);
    let f = &f;
    std::thread::scope(|scope| {
        let spawn =
            |start: usize| scope.spawn(move || (start..n.min(start + chunk)).map(f).collect::<Vec<T>>());
        let handles: Vec<_> = (0..n).step_by(chunk).map(spawn).collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("segment worker panicked"))
            .collect()
    })
}
