//! Trace formats: what each is, how a spec string names one, and detection from a file.
//!
//! A format spec is `name` or `name:key=value,key=value`. Names:
//!
//! | spec | format | key | size | time |
//! |---|---|---|---|---|
//! | `oracleGeneral` (`oracle`) | libCacheSim binary, 24-byte LE records `u32 time, u64 id, u32 size, i64 next` | id | yes | yes |
//! | `csv:...` | text with columns; options below | number or hash | optional | optional |
//! | `txt` (`txt:obj-id-is-num=false`) | one key per line | number (default `auto`) or hash | 1 | index |
//! | `lirs` | LIRS text: one block number per line, `*` lines skipped | number | 1 | index |
//! | `webcachesim` (`wcs`) | `time id size` per line | id | yes | yes |
//! | `hex` | one hex key per line; the first 16 digits (high 64 bits) are the key | number | 1 | index |
//! | `i32be`, `i32le`, `u32be`, `u32le`, `i64be`, `i64le`, `u64be`, `u64le` | headerless arrays of fixed-width integer keys; signed values are sign-extended then read as `u64` | value | 1 | index |
//! | `binary:format=<IIQ,obj-id-col=3,...` | fixed-size records described by a Python-`struct`-like string (as libCacheSim's generic binary reader; `<` little-endian, `>` big-endian; letters `c b B h H i I q Q f d`) | column | column | column |
//! | `lis` (`arc`) | ARC `.lis`: `start n_blocks x y`, expanded into `n_blocks` requests | block | 1 | index |
//! | `vscsi` | VMware vscsi v1 (32-byte) or v2 (40-byte) records, version detected | lbn | len | ts/10^6 |
//!
//! csv options (all columns 1-based, as libCacheSim): `time-col`, `obj-id-col` (`key-col`),
//! `obj-size-col` (`size-col`), `op-col`, `next-access-col`, `delimiter` (a character, or
//! `comma`/`tab`/`space`/`semicolon`/`pipe`; `delimiter=,,` also means comma), `has-header`
//! (`header`, `true`/`false`), `obj-id-is-num` (`true`/`false`; default: decided from the first
//! data row). Lines starting with `#` are comments. Without columns, they are detected from a
//! header line (a `#` comment header counts), e.g. `time, object, size` or `version,time,op,size,lbn`.
//!
//! Any file may be zstd-compressed: it is recognised by its magic number and decompressed as a
//! stream.

use crate::error::{Result, TraceError};
use std::path::Path;

/// How a text key becomes a 64-bit key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KeyMode {
    /// Parse as an integer (decimal, `0x` hex, or a negative decimal taken as `i64 as u64`).
    Number,
    /// Hash the bytes (XXH3-64).
    Hash,
    /// Number if the first data row's key parses as one, else hash.
    #[default]
    Auto,
}

/// Options of the csv reader.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CsvOptions {
    /// 1-based column of the timestamp.
    pub time_col: Option<usize>,
    /// 1-based column of the key.
    pub key_col: Option<usize>,
    /// 1-based column of the size.
    pub size_col: Option<usize>,
    /// 1-based column of the operation.
    pub op_col: Option<usize>,
    /// 1-based column of a next-access position (1-based, libCacheSim style; ignored if absent).
    pub next_col: Option<usize>,
    /// Field delimiter; `None` = detect from the first line.
    pub delimiter: Option<u8>,
    /// Whether the first non-comment line is a header; `None` = detect.
    pub header: Option<bool>,
    /// How keys are mapped.
    pub key_mode: KeyMode,
}

/// One field type of a binary record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// `c`, `b`: i8. `B`: u8.
    I8,
    /// `B`
    U8,
    /// `h`
    I16,
    /// `H`
    U16,
    /// `i`
    I32,
    /// `I`
    U32,
    /// `q`
    I64,
    /// `Q`
    U64,
    /// `f`
    F32,
    /// `d`
    F64,
}

impl Field {
    fn from_letter(c: char) -> Option<Field> {
        Some(match c {
            'c' | 'b' => Field::I8,
            'B' => Field::U8,
            'h' => Field::I16,
            'H' => Field::U16,
            'i' | 'l' => Field::I32,
            'I' | 'L' => Field::U32,
            'q' => Field::I64,
            'Q' => Field::U64,
            'f' => Field::F32,
            'd' => Field::F64,
            _ => return None,
        })
    }

    /// Width in bytes.
    pub fn width(self) -> usize {
        match self {
            Field::I8 | Field::U8 => 1,
            Field::I16 | Field::U16 => 2,
            Field::I32 | Field::U32 | Field::F32 => 4,
            Field::I64 | Field::U64 | Field::F64 => 8,
        }
    }
}

/// A fixed-size binary record layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinaryFormat {
    /// Fields in order, no padding.
    pub fields: Vec<Field>,
    /// Byte order of every field.
    pub big_endian: bool,
    /// 0-based field index of the key.
    pub key: usize,
    /// 0-based field index of the size.
    pub size: Option<usize>,
    /// 0-based field index of the time.
    pub time: Option<usize>,
    /// 0-based field index of the op (a number: 0 get, 1 set, 2 delete, as libCacheSim's).
    pub op: Option<usize>,
    /// 0-based field index of a 1-based next-access position.
    pub next: Option<usize>,
}

impl BinaryFormat {
    /// Record size in bytes.
    pub fn record_size(&self) -> usize {
        self.fields.iter().map(|f| f.width()).sum()
    }

    /// A headerless array of single integer keys.
    pub fn single(field: Field, big_endian: bool) -> Self {
        BinaryFormat {
            fields: vec![field],
            big_endian,
            key: 0,
            size: None,
            time: None,
            op: None,
            next: None,
        }
    }
}

/// A trace format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Format {
    /// libCacheSim oracleGeneral.
    OracleGeneral,
    /// Delimited text.
    Csv(CsvOptions),
    /// One key per line.
    Txt(KeyMode),
    /// LIRS text: one number per line, `*` breakpoints skipped.
    Lirs,
    /// webcachesim `time id size`.
    WebCacheSim,
    /// One hex key per line (first 16 digits kept).
    Hex,
    /// Fixed-size binary records.
    Binary(BinaryFormat),
    /// ARC `.lis`, expanded into blocks.
    Lis,
    /// VMware vscsi v1/v2.
    Vscsi,
}

impl Format {
    /// Short human name.
    pub fn name(&self) -> &'static str {
        match self {
            Format::OracleGeneral => "oracleGeneral",
            Format::Csv(_) => "csv",
            Format::Txt(_) => "txt",
            Format::Lirs => "lirs",
            Format::WebCacheSim => "webcachesim",
            Format::Hex => "hex",
            Format::Binary(_) => "binary",
            Format::Lis => "lis",
            Format::Vscsi => "vscsi",
        }
    }

    /// Whether requests carry real sizes.
    pub fn has_sizes(&self) -> bool {
        match self {
            Format::OracleGeneral | Format::WebCacheSim | Format::Vscsi => true,
            Format::Csv(o) => o.size_col.is_some(),
            Format::Binary(b) => b.size.is_some(),
            _ => false,
        }
    }

    /// Parses a format spec (see the module docs).
    pub fn parse(spec: &str) -> Result<Format> {
        let (name, params) = match spec.split_once(':') {
            Some((n, p)) => (n.trim(), p),
            None => (spec.trim(), ""),
        };
        let params = parse_params(params)?;
        let lname = name.to_ascii_lowercase();
        let no_params = |f: Format| -> Result<Format> {
            if let Some((k, _)) = params.first() {
                return Err(TraceError::Spec(format!(
                    "format '{name}' takes no parameters, got '{k}'"
                )));
            }
            Ok(f)
        };
        match lname.as_str() {
            "oraclegeneral" | "oracle" | "oraclegeneralbin" => no_params(Format::OracleGeneral),
            "lirs" => no_params(Format::Lirs),
            "webcachesim" | "wcs" => no_params(Format::WebCacheSim),
            "hex" => no_params(Format::Hex),
            "lis" | "arc" => no_params(Format::Lis),
            "vscsi" => no_params(Format::Vscsi),
            "txt" | "text" => {
                let mut mode = KeyMode::Auto;
                for (k, v) in &params {
                    match k.as_str() {
                        "obj-id-is-num" | "num" => mode = key_mode(v)?,
                        _ => return Err(unknown_param("txt", k, "obj-id-is-num")),
                    }
                }
                Ok(Format::Txt(mode))
            }
            "csv" => parse_csv(&params).map(Format::Csv),
            "binary" | "bin" => parse_binary(&params).map(Format::Binary),
            _ => {
                if let Some(b) = fixed_width(&lname) {
                    return no_params(Format::Binary(b));
                }
                Err(TraceError::Spec(format!(
                    "unknown trace format '{name}'; known: oracleGeneral, csv, txt, lirs, \
                     webcachesim, hex, lis, vscsi, binary, i32be, i32le, u32be, u32le, i64be, \
                     i64le, u64be, u64le"
                )))
            }
        }
    }
}

fn fixed_width(name: &str) -> Option<BinaryFormat> {
    let (field, be) = match name {
        "i32be" => (Field::I32, true),
        "i32le" => (Field::I32, false),
        "u32be" => (Field::U32, true),
        "u32le" => (Field::U32, false),
        "i64be" => (Field::I64, true),
        "i64le" => (Field::I64, false),
        "u64be" => (Field::U64, true),
        "u64le" => (Field::U64, false),
        _ => return None,
    };
    Some(BinaryFormat::single(field, be))
}

fn unknown_param(fmt: &str, k: &str, known: &str) -> TraceError {
    TraceError::Spec(format!("format '{fmt}' has no parameter '{k}' (known: {known})"))
}

/// Splits `k=v,k=v`; an empty value directly followed by an empty piece is libCacheSim's
/// `delimiter=,,` (comma).
fn parse_params(s: &str) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    let pieces: Vec<&str> = s.split(',').collect();
    let mut i = 0;
    while i < pieces.len() {
        let p = pieces[i].trim();
        i += 1;
        if p.is_empty() {
            continue;
        }
        let (k, v) = p.split_once('=').ok_or_else(|| {
            TraceError::Spec(format!("malformed parameter '{p}': expected key=value"))
        })?;
        let mut v = v.trim().to_string();
        if v.is_empty() && k.trim() == "delimiter" {
            v = ",".into();
            if i < pieces.len() && pieces[i].trim().is_empty() {
                i += 1;
            }
        }
        out.push((k.trim().to_ascii_lowercase(), v));
    }
    Ok(out)
}

fn parse_bool(k: &str, v: &str) -> Result<bool> {
    match v.to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" => Ok(true),
        "false" | "0" | "no" => Ok(false),
        _ => Err(TraceError::Spec(format!("parameter '{k}': expected true or false, got '{v}'"))),
    }
}

fn key_mode(v: &str) -> Result<KeyMode> {
    if v.eq_ignore_ascii_case("auto") {
        return Ok(KeyMode::Auto);
    }
    Ok(if parse_bool("obj-id-is-num", v)? { KeyMode::Number } else { KeyMode::Hash })
}

fn parse_col(k: &str, v: &str) -> Result<usize> {
    match v.parse::<usize>() {
        Ok(c) if c >= 1 => Ok(c),
        _ => Err(TraceError::Spec(format!(
            "parameter '{k}': expected a 1-based column number, got '{v}'"
        ))),
    }
}

fn parse_csv(params: &[(String, String)]) -> Result<CsvOptions> {
    let mut o = CsvOptions::default();
    for (k, v) in params {
        match k.as_str() {
            "time-col" => o.time_col = Some(parse_col(k, v)?),
            "obj-id-col" | "key-col" | "id-col" => o.key_col = Some(parse_col(k, v)?),
            "obj-size-col" | "size-col" => o.size_col = Some(parse_col(k, v)?),
            "op-col" => o.op_col = Some(parse_col(k, v)?),
            "next-access-col" => o.next_col = Some(parse_col(k, v)?),
            "cnt-col" => {
                return Err(TraceError::Spec(
                    "csv parameter 'cnt-col' (request counts) is not supported".into(),
                ))
            }
            "delimiter" => o.delimiter = Some(parse_delimiter(v)?),
            "has-header" | "header" => o.header = Some(parse_bool(k, v)?),
            "obj-id-is-num" => o.key_mode = key_mode(v)?,
            _ => {
                return Err(unknown_param(
                    "csv",
                    k,
                    "time-col, obj-id-col, obj-size-col, op-col, next-access-col, delimiter, \
                     has-header, obj-id-is-num",
                ))
            }
        }
    }
    Ok(o)
}

fn parse_delimiter(v: &str) -> Result<u8> {
    Ok(match v {
        "," | "comma" => b',',
        "\\t" | "\t" | "tab" => b'\t',
        " " | "space" => b' ',
        ";" | "semicolon" => b';',
        "|" | "pipe" => b'|',
        s if s.len() == 1 && s.is_ascii() => s.as_bytes()[0],
        _ => {
            return Err(TraceError::Spec(format!(
                "delimiter must be one ASCII character or comma/tab/space/semicolon/pipe, got '{v}'"
            )))
        }
    })
}

fn parse_binary(params: &[(String, String)]) -> Result<BinaryFormat> {
    let mut fmt: Option<&str> = None;
    let mut cols: [Option<usize>; 5] = [None; 5]; // key, size, time, op, next
    for (k, v) in params {
        let slot = match k.as_str() {
            "format" => {
                fmt = Some(v);
                continue;
            }
            "obj-id-col" | "key-col" => 0,
            "obj-size-col" | "size-col" => 1,
            "time-col" => 2,
            "op-col" => 3,
            "next-access-col" => 4,
            _ => {
                return Err(unknown_param(
                    "binary",
                    k,
                    "format, obj-id-col, obj-size-col, time-col, op-col, next-access-col",
                ))
            }
        };
        cols[slot] = Some(parse_col(k, v)?);
    }
    let fmt = fmt.ok_or_else(|| {
        TraceError::Spec(
            "binary format needs format=<letters>, e.g. 'binary:format=<IQ,obj-id-col=2'".into(),
        )
    })?;
    let (big_endian, letters) = match fmt.chars().next() {
        Some('<') | Some('=') => (false, &fmt[1..]),
        Some('>') | Some('!') => (true, &fmt[1..]),
        _ => (false, fmt),
    };
    let mut fields = Vec::new();
    for c in letters.chars() {
        fields.push(Field::from_letter(c).ok_or_else(|| {
            TraceError::Spec(format!(
                "binary format '{fmt}': unknown field letter '{c}' (known: c b B h H i I q Q f d; \
                 no repeat counts)"
            ))
        })?);
    }
    if fields.is_empty() {
        return Err(TraceError::Spec(format!("binary format '{fmt}' has no fields")));
    }
    let n = fields.len();
    let check = |c: Option<usize>, what: &str| -> Result<Option<usize>> {
        match c {
            Some(c) if c > n => Err(TraceError::Spec(format!(
                "binary format '{fmt}' has {n} fields but {what} is column {c}"
            ))),
            Some(c) => Ok(Some(c - 1)),
            None => Ok(None),
        }
    };
    let key = check(cols[0], "obj-id-col")?
        .ok_or_else(|| TraceError::Spec("binary format needs obj-id-col=N (1-based)".into()))?;
    if matches!(fields[key], Field::F32 | Field::F64) {
        return Err(TraceError::Spec("binary format: the key column cannot be a float".into()));
    }
    Ok(BinaryFormat {
        key,
        size: check(cols[1], "obj-size-col")?,
        time: check(cols[2], "time-col")?,
        op: check(cols[3], "op-col")?,
        next: check(cols[4], "next-access-col")?,
        fields,
        big_endian,
    })
}

/// Detects the format of `path` from its name and, failing that, its first bytes (`head`, the
/// decompressed start of the file).
pub fn detect(path: &Path, head: &[u8]) -> Result<Format> {
    let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    let mut base = name.as_str();
    for ext in [".zst", ".zstd", ".zst.22"] {
        if let Some(b) = base.strip_suffix(ext) {
            base = b;
        }
    }
    let lower = base.to_ascii_lowercase();
    if lower.contains("oraclegeneral") {
        return Ok(Format::OracleGeneral);
    }
    if lower.ends_with(".vscsi") {
        return Ok(Format::Vscsi);
    }
    if lower.ends_with(".lis") {
        return Ok(Format::Lis);
    }
    if lower.ends_with(".csv") {
        return Ok(Format::Csv(CsvOptions::default()));
    }
    let is_text = !head.is_empty()
        && head
            .iter()
            .all(|&b| b == b'\n' || b == b'\r' || b == b'\t' || (0x20..0x7f).contains(&b));
    if !is_text {
        return Err(TraceError::Spec(format!(
            "{}: cannot detect the trace format: binary content without a recognisable name. Pass \
             --format: oracleGeneral, vscsi, i32be, i32le, u32be, u32le, i64be, i64le, u64be, \
             u64le, or binary:format=...",
            path.display()
        )));
    }
    if lower.ends_with(".txt") {
        return Ok(Format::Txt(KeyMode::Auto));
    }
    // Text: look at the first few data lines.
    let text = String::from_utf8_lossy(head);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && *l != "*" && !l.starts_with('#'))
        .take(20)
        .collect();
    let numeric = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let hex = |t: &str| t.len() >= 16 && t.bytes().all(|b| b.is_ascii_hexdigit());
    let shape: Vec<(usize, bool, bool)> = lines
        .iter()
        .take(lines.len().saturating_sub(1).max(1)) // the last line of a head may be cut
        .map(|l| {
            let toks: Vec<&str> = l.split_whitespace().collect();
            (toks.len(), toks.iter().all(|t| numeric(t)), toks.len() == 1 && hex(toks[0]))
        })
        .collect();
    let all = |f: &dyn Fn(&(usize, bool, bool)) -> bool| !shape.is_empty() && shape.iter().all(f);
    if text.lines().next().is_some_and(|l| l.contains(',')) {
        return Ok(Format::Csv(CsvOptions::default()));
    }
    if all(&|s| s.0 == 1 && s.1) {
        return Ok(Format::Lirs);
    }
    if all(&|s| s.0 == 1 && s.2) {
        return Ok(Format::Hex);
    }
    if all(&|s| s.0 == 3 && s.1) {
        return Ok(Format::WebCacheSim);
    }
    if all(&|s| s.0 == 4 && s.1) {
        return Ok(Format::Lis);
    }
    if all(&|s| s.0 == 1) {
        return Ok(Format::Txt(KeyMode::Hash));
    }
    Err(TraceError::Spec(format!(
        "{}: cannot detect the format of this text trace; pass --format (csv:..., txt, lirs, \
         webcachesim, hex, lis)",
        path.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_specs() {
        assert_eq!(Format::parse("oracleGeneral").unwrap(), Format::OracleGeneral);
        let Format::Csv(o) = Format::parse(
            "csv:time-col=2, obj-id-col=5, obj-size-col=4, delimiter=,, has-header=true",
        )
        .unwrap() else {
            panic!()
        };
        assert_eq!((o.time_col, o.key_col, o.size_col), (Some(2), Some(5), Some(4)));
        assert_eq!(o.delimiter, Some(b','));
        assert_eq!(o.header, Some(true));
        let Format::Binary(b) =
            Format::parse("binary:format=<IIIHHQQ,obj-id-col=6,obj-size-col=2").unwrap()
        else {
            panic!()
        };
        assert_eq!(b.record_size(), 32);
        assert_eq!((b.key, b.size), (5, Some(1)));
        assert_eq!(
            Format::parse("i32be").unwrap(),
            Format::Binary(BinaryFormat::single(Field::I32, true))
        );
    }

    #[test]
    fn rejects_bad_specs() {
        for bad in [
            "nope",
            "csv:obj-id-col=0",
            "csv:bogus=1",
            "binary:format=<IZ,obj-id-col=1",
            "binary:format=<I,obj-id-col=2",
            "binary:format=<d,obj-id-col=1",
            "oracleGeneral:x=1",
            "csv:obj-id-col",
        ] {
            let e = Format::parse(bad).unwrap_err().to_string();
            assert!(!e.is_empty(), "{bad}");
        }
    }

    #[test]
    fn detects_text_shapes() {
        let p = Path::new("x.trace");
        assert_eq!(detect(p, b"1\n2\n*\n3\n").unwrap(), Format::Lirs);
        assert_eq!(detect(p, b"1 2 3\n4 5 6\n7 8 9\n").unwrap(), Format::WebCacheSim);
        assert_eq!(detect(p, b"1 1 0 0\n2 1 0 0\n3 1 0 1\n").unwrap(), Format::Lis);
        assert_eq!(
            detect(p, b"d05fdfe4022d6da89116ccbd91a8df8b\neef6560f69080090eef6560f69080090\nab")
                .unwrap(),
            Format::Hex
        );
        assert!(detect(p, &[0, 1, 2, 3, 0xff]).is_err());
        assert_eq!(
            detect(Path::new("a.oracleGeneral.bin.zst"), &[0]).unwrap(),
            Format::OracleGeneral
        );
    }
}
