//! Errors of the trace layer: every error names the file and, for bad content, the record or
//! line and the byte offset (in the decompressed stream) where it was found.

use std::path::PathBuf;

/// Where in a trace a problem was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Position {
    /// A text line (1-based) and the byte offset of its first byte.
    Line { line: u64, offset: u64 },
    /// A binary record (0-based index) and the byte offset of its first byte.
    Record { index: u64, offset: u64 },
    /// The whole file or a spec, not one place in it.
    None,
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Position::Line { line, offset } => write!(f, "line {line} (byte offset {offset})"),
            Position::Record { index, offset } => {
                write!(f, "record {index} (byte offset {offset})")
            }
            Position::None => Ok(()),
        }
    }
}

/// An error reading, detecting or generating a trace.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file could not be opened or read.
    #[error("{}: {source}", path.display())]
    Io {
        /// File.
        path: PathBuf,
        /// Underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The content is corrupt, truncated or not in the expected format.
    #[error("{path}: {pos}: {msg}", path = path.display())]
    Corrupt {
        /// File.
        path: PathBuf,
        /// Where.
        pos: Position,
        /// What is wrong.
        msg: String,
    },
    /// A format or generator spec is malformed, or the format could not be detected.
    #[error("{0}")]
    Spec(String),
    /// A trace argument that names neither an existing file nor a synthetic workload (the
    /// argument as given).
    #[error(
        "{0}: no such file (and not a synthetic workload: {kinds})",
        kinds = crate::synth::KINDS.join(", ")
    )]
    NotFound(String),
}

impl TraceError {
    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        TraceError::Io { path: path.to_path_buf(), source }
    }
}

/// Result alias of this crate.
pub type Result<T, E = TraceError> = std::result::Result<T, E>;
