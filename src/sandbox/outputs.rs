//! Reading what a run left in its output folder, which the solution wrote and so controls:
//! every name there may be a FIFO (opening it would block ml2b forever), a device, a
//! directory, a link to a host file, or a file of any size. [`open_regular`] opens a name
//! only when it is a regular file in that folder: without following a link (`O_NOFOLLOW`),
//! without blocking (`O_NONBLOCK`), and checked with `fstat` on the opened descriptor, so
//! that what is read is what was checked. [`read_capped`] reads such a file only when it is
//! no larger than a cap.
//!
//! What a run's record (`result.json`) says is a claim, not a fact: the solution runs in the
//! harness's own process and can write the record itself. [`check_predictions`] is what
//! ml2b observes instead: a run is `ok` only when its predictions file is a regular,
//! non-empty Parquet file within the output limit.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The most of `result.json` ml2b reads: the harness's record is a few KiB; a larger one
/// was not written by the harness alone and is not stored.
pub(super) const RESULT_CAP: u64 = 64 * 1024;

/// Why an output was not read.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    #[error("is missing")]
    Missing,
    #[error("is a {0}, not a regular file")]
    NotRegular(&'static str),
    #[error("is {size} bytes, over the {cap}-byte limit")]
    TooLarge { size: u64, cap: u64 },
    #[error("is empty")]
    Empty,
    #[error("is not a Parquet file (no PAR1 magic at its start and end)")]
    NotParquet,
    #[error("could not be read")]
    Io(#[source] std::io::Error),
}

/// Opens `path` for reading when it is a regular file (not a link, FIFO, socket, device or
/// directory), without blocking; returns it with its size.
pub(super) fn open_regular(path: &Path) -> Result<(File, u64), Refused> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ENOENT) => Refused::Missing,
            Some(libc::ELOOP) => Refused::NotRegular("symbolic link"),
            _ => Refused::Io(e),
        })?;
    let meta = file.metadata().map_err(Refused::Io)?;
    let kind = meta.file_type();
    if kind.is_file() {
        return Ok((file, meta.len()));
    }
    Err(Refused::NotRegular(if kind.is_dir() {
        "directory"
    } else if kind.is_fifo() {
        "FIFO"
    } else if kind.is_socket() {
        "socket"
    } else if kind.is_block_device() || kind.is_char_device() {
        "device"
    } else {
        "special file"
    }))
}

/// The bytes of the regular file `path` when it holds at most `cap` of them.
pub(super) fn read_capped(path: &Path, cap: u64) -> Result<Vec<u8>, Refused> {
    let (file, size) = open_regular(path)?;
    if size > cap {
        return Err(Refused::TooLarge { size, cap });
    }
    let mut bytes = Vec::new();
    // The size was read before: never read more than the cap, whatever it is now.
    file.take(cap + 1).read_to_end(&mut bytes).map_err(Refused::Io)?;
    match bytes.len() as u64 {
        n if n > cap => Err(Refused::TooLarge { size: n, cap }),
        _ => Ok(bytes),
    }
}

/// Checks that `path` looks like what the harness writes: a regular, non-empty Parquet file
/// of at most `cap` bytes (its contents are the grader's to validate).
pub(super) fn check_predictions(path: &Path, cap: u64) -> Result<(), Refused> {
    let (mut file, size) = open_regular(path)?;
    match size {
        0 => return Err(Refused::Empty),
        n if n > cap => return Err(Refused::TooLarge { size: n, cap }),
        n if n < 8 => return Err(Refused::NotParquet),
        _ => {}
    }
    let mut head = [0u8; 4];
    let mut end = [0u8; 4];
    file.read_exact(&mut head).map_err(Refused::Io)?;
    file.seek(SeekFrom::End(-4)).map_err(Refused::Io)?;
    file.read_exact(&mut end).map_err(Refused::Io)?;
    if &head != b"PAR1" || &end != b"PAR1" {
        return Err(Refused::NotParquet);
    }
    Ok(())
}

/// Copies the regular file `from` to `to`, at most `cap` bytes of it.
pub(super) fn copy_capped(from: &Path, to: &Path, cap: u64) -> Result<(), Refused> {
    let (file, _) = open_regular(from)?;
    let mut out = std::fs::File::create(to).map_err(Refused::Io)?;
    std::io::copy(&mut file.take(cap), &mut out).map_err(Refused::Io)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_are_opened() {
        let dir = tempfile::tempdir().unwrap();
        let p = |n: &str| dir.path().join(n);
        std::fs::write(p("file"), b"{}").unwrap();
        std::os::unix::fs::symlink(p("file"), p("link")).unwrap();
        std::fs::create_dir(p("dir")).unwrap();
        let fifo = std::ffi::CString::new(p("fifo").into_os_string().into_encoded_bytes()).unwrap();
        // SAFETY: a valid, NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        assert_eq!(read_capped(&p("file"), 2).unwrap(), b"{}");
        assert!(matches!(
            read_capped(&p("file"), 1),
            Err(Refused::TooLarge { size: 2, cap: 1 })
        ));
        assert!(matches!(
            read_capped(&p("link"), 9),
            Err(Refused::NotRegular("symbolic link"))
        ));
        assert!(matches!(
            read_capped(&p("dir"), 9),
            Err(Refused::NotRegular("directory"))
        ));
        // Opening a FIFO with no writer would block without O_NONBLOCK.
        assert!(matches!(
            read_capped(&p("fifo"), 9),
            Err(Refused::NotRegular("FIFO"))
        ));
        assert!(matches!(read_capped(&p("none"), 9), Err(Refused::Missing)));
    }

    #[test]
    fn predictions_must_be_a_non_empty_parquet_file_within_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("p");
        std::fs::write(&p, b"").unwrap();
        assert!(matches!(check_predictions(&p, 99), Err(Refused::Empty)));
        std::fs::write(&p, b"id,y\n1,2\n").unwrap();
        assert!(matches!(check_predictions(&p, 99), Err(Refused::NotParquet)));
        std::fs::write(&p, b"PAR1....PAR1").unwrap();
        assert!(check_predictions(&p, 99).is_ok());
        assert!(matches!(check_predictions(&p, 11), Err(Refused::TooLarge { .. })));
    }
}
