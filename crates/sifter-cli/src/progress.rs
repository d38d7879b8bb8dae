//! Progress bars (to stderr; hidden when stderr is not a terminal or `--quiet`).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A bar over `total` units, or a spinner counting units when `total` is 0.
pub fn bar(total: u64, msg: &str, quiet: bool) -> ProgressBar {
    let pb = if total == 0 { ProgressBar::new_spinner() } else { ProgressBar::new(total) };
    if quiet {
        pb.set_draw_target(ProgressDrawTarget::hidden());
    }
    let style = if total == 0 {
        ProgressStyle::with_template("{spinner} {msg}: {human_pos} requests ({per_sec})")
    } else {
        ProgressStyle::with_template(
            "{msg} [{bar:40}] {percent}% {human_pos}/{human_len} ({per_sec}, eta {eta})",
        )
    };
    if let Ok(s) = style {
        pb.set_style(s.progress_chars("=> "));
    }
    pb.set_message(msg.to_string());
    pb
}
