//! Where the CLI's text goes: tables and CSV come from [`sifter_lab::table`]; files or stdout.

pub use sifter_lab::table::{csv_field, csv_line, machine, peers_json, peers_line, sim_csv, table};

/// Writes `text` to `path`, or to stdout when `path` is `-`.
pub fn write_to(path: &std::path::Path, text: &str) -> anyhow::Result<()> {
    if path.as_os_str() == "-" {
        print!("{text}");
        Ok(())
    } else {
        std::fs::write(path, text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
    }
}
