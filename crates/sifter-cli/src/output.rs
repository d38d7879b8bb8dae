//! Plain-text tables.

/// Renders rows as an aligned table; numeric-looking cells are right-aligned. Rows longer than
/// the header get unnamed columns; shorter rows are padded.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let n = rows.iter().map(Vec::len).chain([header.len()]).max().unwrap_or(0);
    let mut w: Vec<usize> = (0..n).map(|i| header.get(i).map_or(0, |h| h.len())).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate().take(n) {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let numeric =
        |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit() || ".-+%e".contains(c));
    let mut out = String::new();
    let line = |cells: Vec<&str>, out: &mut String| {
        let parts: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if numeric(c) {
                    format!("{c:>w$}", w = w[i])
                } else {
                    format!("{c:<w$}", w = w[i])
                }
            })
            .collect();
        out.push_str(parts.join("  ").trim_end());
        out.push('\n');
    };
    line(header.to_vec(), &mut out);
    out.push_str(&w.iter().map(|&x| "-".repeat(x)).collect::<Vec<_>>().join("  "));
    out.push('\n');
    for r in rows {
        line(r.iter().map(String::as_str).collect(), &mut out);
    }
    out
}

/// Writes `text` to `path`, or to stdout when `path` is `-`.
pub fn write_to(path: &std::path::Path, text: &str) -> anyhow::Result<()> {
    if path.as_os_str() == "-" {
        print!("{text}");
        Ok(())
    } else {
        std::fs::write(path, text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
    }
}

/// One CSV line, quoting fields that hold a comma or a quote.
pub fn csv_line(fields: &[&str]) -> String {
    let q: Vec<String> = fields.iter().map(|f| crate::sim::csv_field(f)).collect();
    q.join(",") + "\n"
}

#[cfg(test)]
mod tests {
    #[test]
    fn ragged_rows_do_not_panic() {
        let t = super::table(&["a"], &[vec!["1".into(), "xyz".into()], vec![]]);
        assert!(t.contains("xyz"));
    }
}
