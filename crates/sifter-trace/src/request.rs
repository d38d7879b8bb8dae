//! The unit of every trace: one cache request.

/// What a request asks the cache to do.
///
/// Most traces carry no operation (every request is a lookup: get, and insert on a miss); the
/// simulator, like libCacheSim, treats every request as a lookup whatever its `op`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Op {
    /// A read (the default when a trace has no operation column).
    #[default]
    Get,
    /// A write: set, add, replace, SCSI WRITE, ...
    Set,
    /// An explicit removal.
    Delete,
    /// An operation the reader does not know (kept, not dropped).
    Other,
}

impl Op {
    /// Parses an operation name as found in csv traces (case-insensitive). SCSI command codes
    /// (`28`/`2a` and friends, as in VMware vscsi csv exports) are read as get/set.
    pub fn parse(s: &str) -> Op {
        let s = s.trim();
        let lower = s.to_ascii_lowercase();
        match lower.as_str() {
            "get" | "gets" | "read" | "r" | "lookup" | "08" | "28" | "88" | "a8" => Op::Get,
            "set" | "add" | "replace" | "cas" | "append" | "prepend" | "incr" | "decr"
            | "write" | "w" | "insert" | "update" | "0a" | "2a" | "8a" | "aa" => Op::Set,
            "delete" | "del" | "remove" | "erase" => Op::Delete,
            _ => Op::Other,
        }
    }

    /// Short lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            Op::Get => "get",
            Op::Set => "set",
            Op::Delete => "delete",
            Op::Other => "other",
        }
    }
}

/// Where the next request to the same key is, when known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum NextAccess {
    /// The trace does not say (most formats).
    #[default]
    Unknown,
    /// The key is never requested again.
    Never,
    /// 0-based position (request index in the stream) of the next request to the same key.
    At(u64),
}

/// One cache request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Request {
    /// Timestamp in the trace's own unit (seconds for oracleGeneral and vscsi); traces without
    /// timestamps use the 0-based request index.
    pub time: u64,
    /// The object key, mapped to 64 bits as the format's rules say (see `format` docs).
    pub key: u64,
    /// Object size in bytes (1 when the trace has no sizes).
    pub size: u32,
    /// Operation (`Get` when the trace has none).
    pub op: Op,
    /// Next access position, when the trace carries it.
    pub next_access: NextAccess,
}

impl Request {
    /// A unit-size get of `key` at time `time`.
    pub fn get(time: u64, key: u64) -> Self {
        Request { time, key, size: 1, op: Op::Get, next_access: NextAccess::Unknown }
    }
}
