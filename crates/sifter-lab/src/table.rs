//! Plain-text tables, CSV fields and the machine description written beside results.

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

/// Quotes a CSV field when it holds a comma, a quote or a line end.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// One CSV line, quoting fields that hold a comma or a quote.
pub fn csv_line(fields: &[&str]) -> String {
    let q: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
    q.join(",") + "\n"
}

/// Simulation results as CSV (`sifter sim --csv`'s columns).
pub fn sim_csv(res: &[sifter_sim::runner::SimResult]) -> String {
    let mut s = String::from(
        "trace,policy,spec,size,capacity,bytes,requests,misses,miss_ratio,byte_miss_ratio,seconds\n",
    );
    for r in res {
        s.push_str(&format!(
            "{},{},{},{},{},{},{},{},{:.6},{:.6},{:.4}\n",
            csv_field(&r.trace),
            csv_field(&r.policy),
            csv_field(&r.spec),
            r.size.label(),
            r.capacity,
            r.bytes,
            r.counts.requests,
            r.counts.misses,
            r.miss_ratio,
            r.byte_miss_ratio,
            r.seconds
        ));
    }
    s
}

/// The machine, for result files.
pub fn machine() -> serde_json::Value {
    serde_json::json!({
        "cpus": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        "os": std::env::consts::OS,
        "arch": std::env::consts::ARCH,
        "sifter": env!("CARGO_PKG_VERSION"),
    })
}

/// The peer caches' crate versions the harness was built against, for result files:
/// `{"quick_cache": "0.7.0", …}` ([`sifter_bench::adapter::peer_versions`]).
pub fn peers_json() -> serde_json::Value {
    sifter_bench::adapter::peer_versions()
        .into_iter()
        .map(|(c, v)| (c.to_string(), serde_json::Value::from(v)))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// The same as one line of text: `quick_cache 0.7.0, moka 0.12.16, …`.
pub fn peers_line() -> String {
    sifter_bench::adapter::peer_versions()
        .iter()
        .map(|(c, v)| format!("{c} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn ragged_rows_do_not_panic() {
        let t = super::table(&["a"], &[vec!["1".into(), "xyz".into()], vec![]]);
        assert!(t.contains("xyz"));
    }

    #[test]
    fn csv_fields_are_quoted_only_when_needed() {
        assert_eq!(super::csv_line(&["a", "b,c", "d\"e"]), "a,\"b,c\",\"d\"\"e\"\n");
    }
}
