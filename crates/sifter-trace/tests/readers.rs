//! Reader tests: every format on small hand-made files, zstd streams, detection, and clear
//! errors (file, record/line, byte offset) on corrupt input; and, when `../shared` is present,
//! the four encodings of the cloudPhysicsIO sample agree request by request.

use sifter_trace::oracle::write_oracle_general;
use sifter_trace::{Format, NextAccess, Op, Request, TraceError, TraceReader, TraceSource};
use std::io::Write;
use std::path::{Path, PathBuf};

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).expect("write");
    p
}

fn read(p: &Path, fmt: Option<&str>) -> Result<Vec<Request>, TraceError> {
    let f = fmt.map(|f| Format::parse(f).expect("format"));
    TraceReader::open(p, f.as_ref())?.collect()
}

fn keys(p: &Path, fmt: Option<&str>) -> Vec<u64> {
    read(p, fmt).expect("read").iter().map(|r| r.key).collect()
}

fn zstd(bytes: &[u8]) -> Vec<u8> {
    zstd::encode_all(bytes, 3).expect("zstd")
}

#[test]
fn text_formats() {
    let d = tempfile::tempdir().expect("tmp");
    let lirs = write(d.path(), "a.trace", b"1\n2\n*\n\n3\r\n");
    assert_eq!(keys(&lirs, None), vec![1, 2, 3]);
    let mut r = TraceReader::open(&lirs, None).expect("open");
    assert_eq!(r.by_ref().count(), 3);
    assert_eq!(r.skipped(), 2, "the '*' and the empty line are counted as skipped");
    let wcs = write(d.path(), "w.trace", b"1 7 100\n2 8 200\n3 7 50\n");
    let v = read(&wcs, None).expect("wcs");
    assert_eq!(
        v.iter().map(|r| (r.time, r.key, r.size)).collect::<Vec<_>>(),
        vec![(1, 7, 100), (2, 8, 200), (3, 7, 50)]
    );
    let hex = write(
        d.path(),
        "h",
        b"d05fdfe4022d6da89116ccbd91a8df8b\n00000000000000ff0000000000000000\n",
    );
    assert_eq!(keys(&hex, None), vec![0xd05fdfe4022d6da8, 0xff]);
    let lis = write(d.path(), "x.lis", b"10 3 0 0\n5 1 0 1\n");
    assert_eq!(keys(&lis, None), vec![10, 11, 12, 5]);
    let txt = write(d.path(), "k.txt", b"apple\nbanana\napple\n");
    let k = keys(&txt, Some("txt:obj-id-is-num=false"));
    assert_eq!(k[0], k[2]);
    assert_ne!(k[0], k[1]);
    // time defaults to the request index
    assert_eq!(
        read(&lis, None).expect("lis").iter().map(|r| r.time).collect::<Vec<_>>(),
        vec![0, 1, 2, 3]
    );
}

#[test]
fn csv_columns_headers_and_ops() {
    let d = tempfile::tempdir().expect("tmp");
    // libCacheSim's twitter layout: '#' comment header, comma + space.
    let tw = write(
        d.path(),
        "t.csv",
        b"# time, object, size, next_access_vtime\n0, 42, 100, 3\n1, 43, 50, -1\n2, 42, 100, -1\n",
    );
    let v = read(&tw, None).expect("twitter csv");
    assert_eq!(
        v.iter().map(|r| (r.time, r.key, r.size)).collect::<Vec<_>>(),
        vec![(0, 42, 100), (1, 43, 50), (2, 42, 100)]
    );
    assert_eq!(v[0].next_access, NextAccess::At(2));
    assert_eq!(v[1].next_access, NextAccess::Never);
    // cloudPhysics layout: plain header, op column.
    let cp = write(d.path(), "c.csv", b"version,time,op,size,lbn\n1,5,2a,512,99\n1,6,28,1024,98\n");
    let v = read(&cp, None).expect("cp csv");
    assert_eq!(
        v.iter().map(|r| (r.key, r.op)).collect::<Vec<_>>(),
        vec![(99, Op::Set), (98, Op::Get)]
    );
    // explicit columns, tab delimiter, hashed string keys
    let tab = write(d.path(), "x.tsv", b"a\tget\t10\nb\tset\t20\na\tdelete\t10\n");
    let v = read(&tab, Some("csv:obj-id-col=1,op-col=2,obj-size-col=3,delimiter=tab,has-header=false,obj-id-is-num=false")).expect("tsv");
    assert_eq!(v[0].key, v[2].key);
    assert_eq!(v.iter().map(|r| r.op).collect::<Vec<_>>(), vec![Op::Get, Op::Set, Op::Delete]);
}

#[test]
fn binary_formats_and_zstd() {
    let d = tempfile::tempdir().expect("tmp");
    let be: Vec<u8> = [-1i32, 7, -1].iter().flat_map(|v| v.to_be_bytes()).collect();
    let p = write(d.path(), "b.trace", &be);
    assert_eq!(keys(&p, Some("i32be")), vec![u64::MAX, 7, u64::MAX]);
    let z = write(d.path(), "b.trace.zst", &zstd(&be));
    assert_eq!(keys(&z, Some("i32be")), vec![u64::MAX, 7, u64::MAX]);
    let le: Vec<u8> = [3u32, 4].iter().flat_map(|v| v.to_le_bytes()).collect();
    assert_eq!(keys(&write(d.path(), "l", &le), Some("u32le")), vec![3, 4]);
    // generic: <IQ with key col 2, size col 1
    let mut rec = Vec::new();
    rec.extend_from_slice(&77u32.to_le_bytes());
    rec.extend_from_slice(&123456789u64.to_le_bytes());
    let v =
        read(&write(d.path(), "g", &rec), Some("binary:format=<IQ,obj-id-col=2,obj-size-col=1"))
            .expect("generic");
    assert_eq!((v[0].key, v[0].size), (123456789, 77));
    // big-endian generic
    let rec: Vec<u8> = 5u16.to_be_bytes().into_iter().chain(9u32.to_be_bytes()).collect();
    let v = read(&write(d.path(), "g2", &rec), Some("binary:format=>HI,obj-id-col=2,time-col=1"))
        .expect("generic be");
    assert_eq!((v[0].key, v[0].time), (9, 5));
}

#[test]
fn oracle_general_round_trip() {
    let d = tempfile::tempdir().expect("tmp");
    let mut reqs: Vec<Request> = [(5u64, 10u32), (6, 20), (5, 10), (7, 30)]
        .iter()
        .enumerate()
        .map(|(i, &(k, s))| Request { size: s, ..Request::get(i as u64, k) })
        .collect();
    for name in ["t.oracleGeneral.bin", "t.oracleGeneral.bin.zst"] {
        let p = d.path().join(name);
        write_oracle_general(&p, &mut reqs).expect("write");
        let back = read(&p, None).expect("read back");
        assert_eq!(back.len(), 4);
        assert_eq!(back[0].next_access, NextAccess::At(2));
        assert_eq!(back[1].next_access, NextAccess::Never);
        assert_eq!(
            back.iter().map(|r| (r.key, r.size, r.time)).collect::<Vec<_>>(),
            reqs.iter().map(|r| (r.key, r.size, r.time)).collect::<Vec<_>>()
        );
    }
}

fn err(p: &Path, fmt: Option<&str>) -> String {
    let e = read(p, fmt).expect_err("must fail").to_string();
    assert!(e.contains(&p.display().to_string()), "error must name the file: {e}");
    e
}

#[test]
fn corrupt_inputs_give_located_errors() {
    let d = tempfile::tempdir().expect("tmp");
    // oracleGeneral with a truncated last record (24 + 10 bytes)
    let mut b = vec![0u8; 24];
    b[12] = 1; // size 1
    b[16..24].copy_from_slice(&(-1i64).to_le_bytes());
    b.extend_from_slice(&[1; 10]);
    let e = err(&write(d.path(), "x.oracleGeneral.bin", &b), None);
    assert!(
        e.contains("record 1") && e.contains("byte offset 24") && e.contains("truncated"),
        "{e}"
    );
    // truncated inside a zstd stream: offsets are in the decompressed stream
    let e = err(&write(d.path(), "y.oracleGeneral.bin.zst", &zstd(&b)), None);
    assert!(e.contains("byte offset 24"), "{e}");
    // bad next-access value
    let mut c = b[..24].to_vec();
    c[16..24].copy_from_slice(&(-5i64).to_le_bytes());
    assert!(err(&write(d.path(), "z.oracleGeneral.bin", &c), None).contains("next-access"));
    // i64be with a length that is not a multiple of 8
    let e = err(&write(d.path(), "s.trace", &[0u8; 12]), Some("i64be"));
    assert!(e.contains("record 1") && e.contains("truncated"), "{e}");
    // lirs with garbage on line 3
    let e = err(&write(d.path(), "l.trace", b"1\n2\nfoo\n"), Some("lirs"));
    assert!(e.contains("line 3") && e.contains("byte offset 4") && e.contains("'foo'"), "{e}");
    // webcachesim with two fields
    assert!(err(&write(d.path(), "w", b"1 2 3\n4 5\n"), Some("webcachesim")).contains("line 2"));
    // csv with a missing column and a non-numeric size
    let e = err(&write(d.path(), "c.csv", b"time,key,size\n1,2,3\n1,2\n"), None);
    assert!(e.contains("line 3") && e.contains("size column 3 missing"), "{e}");
    assert!(err(&write(d.path(), "c2.csv", b"time,key,size\n1,2,big\n"), None).contains("'big'"));
    // csv size beyond u32
    assert!(err(&write(d.path(), "c3.csv", b"time,key,size\n1,2,99999999999\n"), None)
        .contains("4 GiB"));
    // csv without a header or columns
    assert!(err(&write(d.path(), "c4.csv", b"1,2,3\n"), None).contains("obj-id-col"));
    // absurd ARC block count
    assert!(err(&write(d.path(), "a.lis", b"1 99999999999 0 0\n"), None).contains("block count"));
    // vscsi with a wrong version byte
    assert!(err(&write(d.path(), "v.vscsi", &[0u8; 64]), None).contains("vscsi"));
    // binary without a name hint: detection explains what to pass
    let e = TraceReader::open(&write(d.path(), "mystery", &[0, 159, 146, 150]), None)
        .expect_err("undetectable")
        .to_string();
    assert!(e.contains("--format"), "{e}");
    // a file that does not exist
    assert!(TraceSource::parse("/nonexistent/trace.bin", None).is_err());
    // not a zstd stream after the magic number
    let mut bad = vec![0x28, 0xb5, 0x2f, 0xfd];
    bad.extend_from_slice(&[0xff; 20]);
    assert!(read(&write(d.path(), "bad.oracleGeneral.bin.zst", &bad), None).is_err());
}

#[test]
fn cloudphysics_encodings_agree() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
    if !root.join("cloudPhysicsIO.vscsi").exists() {
        eprintln!("SKIPPED: ../shared/traces not found");
        return;
    }
    let og = read(&root.join("cloudPhysicsIO.oracleGeneral.bin"), None).expect("og");
    let vs = read(&root.join("cloudPhysicsIO.vscsi"), None).expect("vscsi");
    let csv = read(&root.join("cloudPhysicsIO.csv"), None).expect("csv");
    let txt = read(&root.join("cloudPhysicsIO.txt"), None).expect("txt");
    assert_eq!(og.len(), 113_872);
    for v in [&vs, &csv, &txt] {
        assert_eq!(v.len(), og.len());
        assert!(v.iter().zip(&og).all(|(a, b)| a.key == b.key));
    }
    // vscsi and csv carry each I/O's own size and the same time (seconds)
    assert!(vs.iter().zip(&csv).all(|(a, b)| a.size == b.size && a.time == b.time));
    assert_eq!(og[0].time, 5_633_898);
    let _ = std::io::stdout().flush();
}

/// Every block of `src` in one, or the first error (as text).
fn blocks_of(src: &TraceSource, with_next: bool) -> Result<sifter_trace::Block, String> {
    let mut blocks = src.blocks(with_next).map_err(|e| e.to_string())?;
    sifter_trace::Block::collect(&mut blocks).map_err(|e| e.to_string())
}

/// The same columns through the request reader.
fn blocks_via_requests(src: &TraceSource, with_next: bool) -> Result<sifter_trace::Block, String> {
    let reqs = src.requests().map_err(|e| e.to_string())?;
    let mut rb = sifter_trace::RequestBlocks::new(reqs, with_next);
    sifter_trace::Block::collect(&mut rb).map_err(|e| e.to_string())
}

#[test]
fn csv_blocks_parsed_in_parallel_equal_the_request_reader() {
    use rand::{Rng, SeedableRng};
    let d = tempfile::tempdir().expect("tmp");
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(3);
    // ~12 MB: several read steps, each cut into parts; comments, blank lines, CRLF, quotes,
    // zero sizes and next-access columns along the way.
    let mut text = String::from("# time, object, size, next_access_vtime\n");
    for i in 0..400_000u64 {
        match rng.random_range(0..200) {
            0 => text.push_str("# a comment\n"),
            1 => text.push('\n'),
            2 => text.push_str(&format!("{i}, \"{}\", 0, -1\r\n", rng.random::<u64>())),
            _ => {
                let next = if rng.random_bool(0.3) { -1 } else { (i + 5) as i64 };
                text.push_str(&format!(
                    "{i}, {}, {}, {next}\n",
                    rng.random_range(0..50_000u64) * 1_000_000_007,
                    rng.random_range(1..5000u32)
                ));
            }
        }
    }
    text.push_str("999, 12, 34, -1"); // a last line without a line end
    let plain = write(d.path(), "t.csv", text.as_bytes());
    let packed = write(d.path(), "t.csv.zst", &zstd(text.as_bytes()));
    for p in [&plain, &packed] {
        let src = TraceSource::parse(p.to_str().expect("utf-8"), None).expect("src");
        for with_next in [false, true] {
            let (a, b) = (blocks_of(&src, with_next), blocks_via_requests(&src, with_next));
            assert_eq!(a, b, "{} with_next={with_next}", p.display());
            let a = a.expect("reads");
            assert!(a.len() > 390_000 && a.skipped_zero_size > 1000, "{}", a.len());
        }
    }
    // A corrupt line late in the file (in a later part of a later step): the same error, with
    // the same line number and byte offset, as the request reader's.
    let mut bad = text.clone();
    let at = bad.len() * 7 / 8;
    let at = at + bad[at..].find('\n').expect("a line end") + 1;
    bad.insert_str(at, "5, 77, notasize, 3\n");
    let bad = write(d.path(), "bad.csv", bad.as_bytes());
    let src = TraceSource::parse(bad.to_str().expect("utf-8"), None).expect("src");
    let (a, b) = (blocks_of(&src, false), blocks_via_requests(&src, false));
    let e = a.expect_err("corrupt size");
    assert_eq!(Err(e.clone()), b);
    assert!(e.contains("notasize") && e.contains("line "), "{e}");
}
