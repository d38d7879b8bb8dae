//! Writing libCacheSim oracleGeneral traces, and computing next-access positions.

use crate::error::{Result, TraceError};
use crate::request::{NextAccess, Request};
use hashbrown::HashMap;
use std::io::Write;
use std::path::Path;

/// Size of one oracleGeneral record.
pub const ORACLE_RECORD: usize = 24;

/// For each request, the 0-based position of the next request to the same key.
pub fn next_accesses(
    keys: impl DoubleEndedIterator<Item = u64> + ExactSizeIterator,
) -> Vec<NextAccess> {
    let n = keys.len();
    let mut out = vec![NextAccess::Never; n];
    let mut last: HashMap<u64, u64> = HashMap::new();
    for (i, k) in keys.enumerate().collect::<Vec<_>>().into_iter().rev() {
        if let Some(p) = last.insert(k, i as u64) {
            out[i] = NextAccess::At(p);
        }
    }
    out
}

/// Encodes one request as an oracleGeneral record (next access 1-based, -1 for never).
pub fn encode(r: &Request) -> Result<[u8; ORACLE_RECORD]> {
    let time = u32::try_from(r.time).map_err(|_| {
        TraceError::Spec(format!("timestamp {} does not fit oracleGeneral's u32 time", r.time))
    })?;
    let next: i64 = match r.next_access {
        NextAccess::At(p) => i64::try_from(p + 1)
            .map_err(|_| TraceError::Spec(format!("next access {p} too large")))?,
        NextAccess::Never | NextAccess::Unknown => -1,
    };
    let mut b = [0u8; ORACLE_RECORD];
    b[0..4].copy_from_slice(&time.to_le_bytes());
    b[4..12].copy_from_slice(&r.key.to_le_bytes());
    b[12..16].copy_from_slice(&r.size.to_le_bytes());
    b[16..24].copy_from_slice(&next.to_le_bytes());
    Ok(b)
}

/// Writes `requests` as oracleGeneral to `path`, recomputing every next-access field from the
/// request sequence (the input's own fields are not trusted). A path ending in `.zst` is
/// zstd-compressed. Returns the number of records written.
pub fn write_oracle_general(path: &Path, requests: &mut [Request]) -> Result<u64> {
    let next = next_accesses(requests.iter().map(|r| r.key));
    for (r, n) in requests.iter_mut().zip(next) {
        r.next_access = n;
    }
    let file = std::fs::File::create(path).map_err(|e| TraceError::io(path, e))?;
    let buf = std::io::BufWriter::with_capacity(1 << 20, file);
    let mut w: Box<dyn Write> = if path.extension().is_some_and(|e| e == "zst") {
        Box::new(
            zstd::stream::write::Encoder::new(buf, 3)
                .map_err(|e| TraceError::io(path, e))?
                .auto_finish(),
        )
    } else {
        Box::new(buf)
    };
    for r in requests.iter() {
        w.write_all(&encode(r)?).map_err(|e| TraceError::io(path, e))?;
    }
    w.flush().map_err(|e| TraceError::io(path, e))?;
    drop(w);
    Ok(requests.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_access_positions() {
        let n = next_accesses([1u64, 2, 1, 3, 2, 1].into_iter());
        use NextAccess::*;
        assert_eq!(n, vec![At(2), At(4), At(5), Never, Never, Never]);
    }
}
