//! A plain-text table with aligned columns, for the terminal.

pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> Table {
        Table { header: header.into_iter().map(Into::into).collect(), rows: Vec::new() }
    }

    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Columns left-aligned when textual, right-aligned when every cell is a number.
    pub fn render(&self) -> String {
        let cols = self.header.len();
        let width = |c: usize| {
            self.rows
                .iter()
                .chain(std::iter::once(&self.header))
                .map(|r| r.get(c).map_or(0, |s| s.chars().count()))
                .max()
                .unwrap_or(0)
        };
        let numeric = |c: usize| {
            self.rows.iter().all(|r| {
                r.get(c).is_none_or(|s| {
                    s.trim_start_matches(['-', '+', '×']).starts_with(|ch: char| ch.is_ascii_digit()) || s == "-"
                })
            })
        };
        let widths: Vec<usize> = (0..cols).map(width).collect();
        let aligns: Vec<bool> = (0..cols).map(numeric).collect();
        let mut out = String::new();
        for row in std::iter::once(&self.header).chain(&self.rows) {
            let cells: Vec<String> = (0..cols)
                .map(|c| {
                    let s = row.get(c).map(String::as_str).unwrap_or("");
                    if aligns[c] {
                        format!("{s:>w$}", w = widths[c])
                    } else {
                        format!("{s:<w$}", w = widths[c])
                    }
                })
                .collect();
            out.push_str(cells.join("  ").trim_end());
            out.push('\n');
        }
        out
    }
}

/// Bytes per second in GB/s (SI, as STREAM and likwid report).
pub fn gbps(bytes_per_s: f64) -> String {
    format!("{:.2}", bytes_per_s / 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align() {
        let mut t = Table::new(["kernel", "GB/s"]);
        t.row(["sum1", "5.10"]);
        t.row(["simd-prefetch", "38.20"]);
        assert_eq!(t.render(), "kernel          GB/s\nsum1            5.10\nsimd-prefetch  38.20\n");
    }
}
