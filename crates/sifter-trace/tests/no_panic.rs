//! Arbitrary bytes in any format give requests or an error — never a panic or a hang.

use proptest::prelude::*;
use sifter_trace::{Format, TraceReader};

const FORMATS: &[&str] = &[
    "oracleGeneral",
    "csv",
    "csv:obj-id-col=2,obj-size-col=3,time-col=1,op-col=4,next-access-col=5",
    "txt",
    "lirs",
    "webcachesim",
    "hex",
    "lis",
    "vscsi",
    "i32be",
    "u64le",
    "binary:format=<bHIqdf,obj-id-col=4,obj-size-col=2,time-col=5,op-col=1,next-access-col=3",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]
    #[test]
    fn readers_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600), text in "[0-9a-f ,#*\\n.\\-x]{0,300}") {
        let d = tempfile::tempdir().expect("tmp");
        for (i, input) in [bytes.as_slice(), text.as_bytes()].into_iter().enumerate() {
            let p = d.path().join(format!("in{i}"));
            std::fs::write(&p, input).expect("write");
            for f in FORMATS {
                let fmt = Format::parse(f).expect("format");
                if let Ok(r) = TraceReader::open(&p, Some(&fmt)) {
                    // At most one request per input byte (ARC lines expand, but are capped).
                    let n = r.take(1 << 26).count();
                    prop_assert!(n <= (1 << 26));
                }
            }
            let _ = TraceReader::open(&p, None).map(|r| r.count());
        }
    }
}
