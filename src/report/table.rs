//! A plain-text table with aligned columns, for the terminal. Inside
//! [`with_width`] (a terminal of that many columns) a table wider than the
//! terminal is split into column groups, each repeating the first column,
//! so that no line wraps; one that cannot fit even so is printed as one
//! record per row ("column: value" lines). Inside [`captured`] (the HTML
//! report) a table is kept whole for the page to draw as a real table, and
//! its text holds a mark where it stood. Everywhere, a column that holds
//! nothing ("-" or empty in every row) is left out.

use std::cell::{Cell, RefCell};

thread_local! {
    static WIDTH: Cell<Option<usize>> = const { Cell::new(None) };
    static CAPTURE: RefCell<Option<Vec<HtmlTable>>> = const { RefCell::new(None) };
}

/// What marks a captured table's place in the text: this character, then
/// the table's index in [`captured`]'s list, alone on its line.
pub const MARK: char = '\u{1e}';

/// A table as the HTML report draws it: its header and rows, empty columns
/// left out.
#[derive(Debug, Clone, PartialEq)]
pub struct HtmlTable {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Whether each column holds numbers (right-aligned).
    pub numeric: Vec<bool>,
}

/// What `f` renders, with each table kept whole: the text (a [`MARK`] line
/// where each table stood) and the tables.
pub fn captured(f: impl FnOnce() -> String) -> (String, Vec<HtmlTable>) {
    let before = CAPTURE.with(|c| c.replace(Some(Vec::new())));
    let text = f();
    let tables = CAPTURE.with(|c| c.replace(before)).unwrap_or_default();
    (text, tables)
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
        let all: Vec<usize> = (0..self.header.len()).filter(|&c| !self.empty(c)).collect();
        if let Some(mark) = self.capture(&all) {
            return mark;
        }
        let Some(max) = WIDTH.with(Cell::get) else { return self.render_columns(&all) };
        let width = |c: usize| self.width(c);
        if all.iter().map(|&c| width(c)).sum::<usize>() + 2 * all.len().saturating_sub(1) <= max {
            return self.render_columns(&all);
        }
        // Column groups: the first column, then as many as fit.
        let first = all[0];
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut current = vec![first];
        let mut used = width(first);
        for &c in &all[1..] {
            if used + 2 + width(c) > max && current.len() > 1 {
                groups.push(std::mem::replace(&mut current, vec![first]));
                used = width(first);
            }
            current.push(c);
            used += 2 + width(c);
        }
        groups.push(current);
        let fits = |g: &Vec<usize>| g.iter().map(|&c| width(c)).sum::<usize>() + 2 * (g.len() - 1) <= max;
        if groups.iter().all(fits) {
            return groups.iter().map(|g| self.render_columns(g)).collect::<Vec<_>>().join("\n");
        }
        self.render_records(&all, max)
    }

    /// Whether column `c` holds nothing: "-" or empty in every row (a
    /// table with no rows keeps its columns).
    fn empty(&self, c: usize) -> bool {
        !self.rows.is_empty() && self.rows.iter().all(|r| r.get(c).is_none_or(|s| matches!(s.trim(), "" | "-")))
    }

    /// Inside [`captured`]: the table kept whole, and its mark.
    fn capture(&self, columns: &[usize]) -> Option<String> {
        CAPTURE.with(|cap| {
            let mut cap = cap.borrow_mut();
            let list = cap.as_mut()?;
            let pick = |row: &Vec<String>| columns.iter().map(|&c| row.get(c).cloned().unwrap_or_default()).collect();
            list.push(HtmlTable {
                header: pick(&self.header),
                rows: self.rows.iter().map(pick).collect(),
                numeric: columns.iter().map(|&c| self.numeric(c)).collect(),
            });
            Some(format!("{MARK}{}\n", list.len() - 1))
        })
    }

    /// Whether every cell of column `c` is a number (or "-").
    fn numeric(&self, c: usize) -> bool {
        self.rows.iter().all(|r| {
            r.get(c).is_none_or(|s| {
                s.trim_start_matches(['-', '+', '×']).starts_with(|ch: char| ch.is_ascii_digit()) || s == "-"
            })
        })
    }

    /// One block per row: each column's name and value, the value wrapped.
    fn render_records(&self, columns: &[usize], max: usize) -> String {
        let name_w = columns.iter().map(|&c| self.header[c].chars().count()).max().unwrap_or(0).min(max / 3);
        let mut out = String::new();
        for (i, row) in self.rows.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            for &c in columns {
                let h = &self.header[c];
                let value = row.get(c).map(String::as_str).unwrap_or("");
                let lead = format!("{:<name_w$}  ", crate::terminal::shorten(h, name_w));
                out.push_str(&crate::terminal::wrap_line(&format!("{lead}{value}"), max, lead.chars().count()));
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
        let widths: Vec<usize> = columns.iter().map(|&c| self.width(c)).collect();
        let aligns: Vec<bool> = columns.iter().map(|&c| self.numeric(c)).collect();
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
    let width = crate::terminal::terminal_width(fd);
    crate::terminal::fit(&with_width(width, render), width)
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

    /// A column that holds nothing in any row is left out, in the terminal
    /// and in the report; a captured table leaves a mark where it stood.
    #[test]
    fn empty_columns_are_left_out_and_captured_tables_leave_a_mark() {
        let mut t = Table::new(["size", "4k local ns", "thp ns", "note"]);
        t.row(["16KiB", "-", "1.00", ""]);
        t.row(["1GiB", "-", "95.00", "-"]);
        assert_eq!(t.render(), " size  thp ns\n16KiB    1.00\n 1GiB   95.00\n");
        let (text, tables) = captured(|| format!("before\n{}after\n", t.render()));
        assert_eq!(text, format!("before\n{MARK}0\nafter\n"));
        assert_eq!(tables.len(), 1);
        assert_eq!(tables[0].header, ["size", "thp ns"]);
        assert_eq!(tables[0].rows[1], ["1GiB", "95.00"]);
        assert_eq!(tables[0].numeric, [true, true]);
        assert_eq!(Table::new(["a", "b"]).render(), "a  b\n", "a table with no rows keeps its columns");
    }
}
