//! A plain-text table with aligned columns, for the terminal. Inside
//! [`with_width`] (a terminal of that many columns) a table wider than the
//! terminal is split into column groups, each repeating the first column,
//! so that no line wraps; one that cannot fit even so is printed as one
//! record per row ("column: value" lines).

use std::cell::Cell;

thread_local! {
    static WIDTH: Cell<Option<usize>> = const { Cell::new(None) };
}

/// Renders with tables fitted to `width` columns (`None`: as wide as they
/// are, for files).
pub fn with_width<T>(width: Option<usize>, f: impl FnOnce() -> T) -> T {
    let before = WIDTH.with(|w| w.replace(width));
    let out = f();
    WIDTH.with(|w| w.set(before));
    out
}

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

    /// Columns left-aligned when textual, right-aligned when every cell is
    /// a number; fitted to the terminal inside [`with_width`].
    pub fn render(&self) -> String {
        let all: Vec<usize> = (0..self.header.len()).collect();
        let Some(max) = WIDTH.with(Cell::get) else { return self.render_columns(&all) };
        let widths: Vec<usize> = all.iter().map(|&c| self.width(c)).collect();
        if widths.iter().sum::<usize>() + 2 * widths.len().saturating_sub(1) <= max {
            return self.render_columns(&all);
        }
        // Column groups: the first column, then as many as fit.
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut current = vec![0];
        let mut used = widths[0];
        for c in 1..widths.len() {
            if used + 2 + widths[c] > max && current.len() > 1 {
                groups.push(std::mem::replace(&mut current, vec![0]));
                used = widths[0];
            }
            current.push(c);
            used += 2 + widths[c];
        }
        groups.push(current);
        let fits = |g: &Vec<usize>| g.iter().map(|&c| widths[c]).sum::<usize>() + 2 * (g.len() - 1) <= max;
        if groups.iter().all(fits) {
            return groups.iter().map(|g| self.render_columns(g)).collect::<Vec<_>>().join("\n");
        }
        self.render_records(max)
    }

    /// One block per row: each column's name and value, the value wrapped.
    fn render_records(&self, max: usize) -> String {
        let name_w = self.header.iter().map(|h| h.chars().count()).max().unwrap_or(0).min(max / 3);
        let mut out = String::new();
        for (i, row) in self.rows.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            for (c, h) in self.header.iter().enumerate() {
                let value = row.get(c).map(String::as_str).unwrap_or("");
                let lead = format!("{:<name_w$}  ", crate::report::sink::shorten(h, name_w));
                out.push_str(&crate::report::sink::wrap_line(&format!("{lead}{value}"), max, lead.chars().count()));
                out.push('\n');
            }
        }
        out
    }

    fn width(&self, c: usize) -> usize {
        self.rows
            .iter()
            .chain(std::iter::once(&self.header))
            .map(|r| r.get(c).map_or(0, |s| s.chars().count()))
            .max()
            .unwrap_or(0)
    }

    fn render_columns(&self, columns: &[usize]) -> String {
        let numeric = |c: usize| {
            self.rows.iter().all(|r| {
                r.get(c).is_none_or(|s| {
                    s.trim_start_matches(['-', '+', '×']).starts_with(|ch: char| ch.is_ascii_digit()) || s == "-"
                })
            })
        };
        let widths: Vec<usize> = columns.iter().map(|&c| self.width(c)).collect();
        let aligns: Vec<bool> = columns.iter().map(|&c| numeric(c)).collect();
        let mut out = String::new();
        for row in std::iter::once(&self.header).chain(&self.rows) {
            let cells: Vec<String> = columns
                .iter()
                .enumerate()
                .map(|(i, &c)| {
                    let s = row.get(c).map(String::as_str).unwrap_or("");
                    if aligns[i] {
                        format!("{s:>w$}", w = widths[i])
                    } else {
                        format!("{s:<w$}", w = widths[i])
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

/// What `render` makes, for a terminal on `fd`: tables fitted, long lines
/// wrapped; unchanged where `fd` is not a terminal.
pub fn for_terminal(fd: i32, render: impl FnOnce() -> String) -> String {
    let width = crate::sink::terminal_width(fd);
    crate::sink::fit(&with_width(width, render), width)
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

    /// In a narrow terminal, a wide table splits into column groups that
    /// repeat the first column; one that cannot fit becomes records; no
    /// line is wider than the terminal. Files keep the whole width.
    #[test]
    fn tables_fit_the_terminal() {
        let mut t = Table::new(["size", "4k local ns", "thp local ns", "4k remote ns", "thp remote ns"]);
        t.row(["16KiB", "1.10", "1.00", "1.20", "1.10"]);
        t.row(["1GiB", "120.50", "95.00", "180.25", "140.00"]);
        let whole = t.render();
        assert_eq!(whole.lines().next().unwrap().len(), 61);
        let fitted = with_width(Some(40), || t.render());
        assert!(fitted.lines().all(|l| l.chars().count() <= 40), "{fitted}");
        assert_eq!(fitted.matches("size").count(), 2, "two groups, each with the first column: {fitted}");
        assert!(fitted.contains("thp remote ns") && fitted.contains("180.25"), "{fitted}");
        let mut long = Table::new(["phase", "mostly in"]);
        long.row(["1", "the anonymous mapping at 0x7f0000000000 of pid 4242, which is long (100%)"]);
        let records = with_width(Some(40), || long.render());
        assert!(records.lines().all(|l| l.chars().count() <= 40), "{records}");
        assert!(records.starts_with("phase      1\nmostly in  the anonymous"), "{records}");
        assert_eq!(t.render(), whole, "outside with_width nothing changes");
    }
}
