//! `--size` as the simulator reads it (and `sifter bench` reads counts): fractions, counts with
//! ×1000 suffixes, bytes with ×1024 suffixes; a count must be whole.

use sifter_sim::runner::CacheSize;

#[test]
fn sizes_parse_as_fractions_counts_or_bytes() {
    let ok = [
        ("0.01", CacheSize::Fraction(0.01)),
        ("1.0", CacheSize::Fraction(1.0)),
        ("1000", CacheSize::Absolute(1000)),
        ("10k", CacheSize::Absolute(10_000)),
        ("1.5k", CacheSize::Absolute(1_500)),
        ("2M", CacheSize::Absolute(2_000_000)),
        ("64MiB", CacheSize::Absolute(64 << 20)),
        ("1.5KiB", CacheSize::Absolute(1536)),
    ];
    for (s, want) in ok {
        assert_eq!(CacheSize::parse(s).unwrap(), want, "{s:?}");
    }
    // Not whole (refused, not truncated to 1234), zero, negative, words, fractions above 1.
    for bad in ["1.2345k", "0.0001KiB", "0", "0k", "-1", "abc", "k", "1.5"] {
        assert!(CacheSize::parse(bad).is_err(), "{bad:?} accepted");
    }
}
