//! The progress line of `scryer index`: files done of all, rate and time left, redrawn in
//! place on a terminal's stderr; nothing at all when stderr is not a terminal (a pipe, a
//! log file, CI).

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// Redraws at most this often.
const REDRAW: Duration = Duration::from_millis(200);

pub struct Line {
    enabled: bool,
    started: Instant,
    last: Option<Instant>,
    drawn: bool,
}

impl Line {
    /// A line on stderr when it is a terminal.
    pub fn on_stderr() -> Line {
        Line::new(std::io::stderr().is_terminal())
    }

    fn new(enabled: bool) -> Line {
        Line {
            enabled,
            started: Instant::now(),
            last: None,
            drawn: false,
        }
    }

    /// `done` of `total` files parsed so far.
    pub fn tick(&mut self, done: u32, total: u32) {
        if !self.enabled || self.last.is_some_and(|t| t.elapsed() < REDRAW) {
            return;
        }
        self.last = Some(Instant::now());
        let text = render(done, total, self.started.elapsed());
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K{text}");
        let _ = err.flush();
        self.drawn = true;
    }

    /// Clears the line, so the summary printed next stands alone.
    pub fn finish(&mut self) {
        if self.drawn {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
            self.drawn = false;
        }
    }
}

impl Drop for Line {
    fn drop(&mut self) {
        self.finish();
    }
}

/// `indexing: 8,123 / 17,236 files (47%), 612 files/s, about 15s left`.
fn render(done: u32, total: u32, elapsed: Duration) -> String {
    if total == 0 {
        return "indexing: walking the tree…".into();
    }
    let pct = u64::from(done) * 100 / u64::from(total);
    let secs = elapsed.as_secs_f64();
    let rate = if secs > 0.0 {
        f64::from(done) / secs
    } else {
        0.0
    };
    let left = if rate > 0.0 && done < total {
        let s = (f64::from(total - done) / rate).ceil() as u64;
        format!(", about {} left", crate::daemon::human(s))
    } else {
        String::new()
    };
    format!(
        "indexing: {} / {} files ({pct}%), {:.0} files/s{left}",
        thousands(done),
        thousands(total),
        rate
    )
}

fn thousands(n: u32) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_says_done_total_rate_and_time_left() {
        assert_eq!(
            render(8_123, 17_236, Duration::from_secs(10)),
            "indexing: 8,123 / 17,236 files (47%), 812 files/s, about 12s left"
        );
        assert_eq!(
            render(500, 500, Duration::from_secs(1)),
            "indexing: 500 / 500 files (100%), 500 files/s"
        );
        assert_eq!(render(0, 0, Duration::ZERO), "indexing: walking the tree…");
    }

    #[test]
    fn nothing_is_drawn_off_a_terminal() {
        let mut line = Line::new(false);
        line.tick(1, 2);
        assert!(!line.drawn && line.last.is_none());
    }
}
