//! Text as it may reach a person: made safe (control characters that a
//! crafted document could use to drive the terminal or forge a line become
//! `?`), and fitted to a terminal's width (wrapped at words, cut with "…"),
//! while a file or pipe keeps its lines whole. A leaf: every layer may say
//! things through it.

/// Text safe for a terminal: control characters (ESC, BEL, C1 …) that a
/// crafted document could use to retitle or recolour the terminal are
/// replaced by `?`; newlines and tabs stay.
pub fn terminal_safe(text: &str) -> String {
    text.chars().map(|c| if c.is_control() && c != '\n' && c != '\t' { '?' } else { c }).collect()
}

/// The width of the terminal on `fd` (1 stdout, 2 stderr): `None` when it
/// is not a terminal (a file or pipe keeps its lines whole).
pub fn terminal_width(fd: i32) -> Option<usize> {
    // SAFETY: isatty only inspects the descriptor.
    if unsafe { libc::isatty(fd) } != 1 {
        return None;
    }
    let mut ws = libc::winsize { ws_row: 0, ws_col: 0, ws_xpixel: 0, ws_ypixel: 0 };
    // SAFETY: TIOCGWINSZ writes one winsize into the struct we own.
    let ok = unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &mut ws) } == 0;
    let from_env = || std::env::var("COLUMNS").ok()?.trim().parse::<usize>().ok();
    let cols = if ok && ws.ws_col > 0 { Some(ws.ws_col as usize) } else { from_env() };
    cols.filter(|&c| c >= 20)
}

/// The first `n` characters of `s`, the last of them "…" where it was cut.
pub fn shorten(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n.saturating_sub(1)).chain(std::iter::once('…')).collect()
    }
}

/// `line` wrapped at word boundaries to `width` columns, continuation
/// lines indented by `indent`; a word longer than a line is cut.
pub fn wrap_line(line: &str, width: usize, indent: usize) -> String {
    if line.chars().count() <= width {
        return line.to_string();
    }
    let indent = indent.min(width / 2);
    let lead: String = line.chars().take_while(|c| *c == ' ').collect();
    let mut out = String::new();
    let mut current = lead.clone();
    let mut at_start = true;
    for word in line[lead.len()..].split(' ') {
        let fits = current.chars().count() + usize::from(!at_start) + word.chars().count() <= width;
        if !fits && !at_start {
            out.push_str(current.trim_end());
            out.push('\n');
            current = " ".repeat(indent);
            at_start = true;
        }
        let mut word = word.to_string();
        while current.chars().count() + word.chars().count() > width && at_start {
            let room = width - current.chars().count();
            let head: String = word.chars().take(room.max(1)).collect();
            word = word.chars().skip(room.max(1)).collect();
            out.push_str(&current);
            out.push_str(&head);
            out.push('\n');
            current = " ".repeat(indent);
        }
        if !at_start {
            current.push(' ');
        }
        current.push_str(&word);
        at_start = false;
    }
    out.push_str(current.trim_end());
    out
}

/// Text for a terminal `width` columns wide: every line longer than it
/// wrapped at words, continuation lines under the line's text (after its
/// indent and any "→ " or "label: " lead).
pub fn fit(text: &str, width: Option<usize>) -> String {
    let Some(width) = width else { return text.to_string() };
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, nl) = line.strip_suffix('\n').map_or((line, ""), |b| (b, "\n"));
        let spaces = body.chars().take_while(|c| *c == ' ').count();
        let rest = &body[spaces..];
        let lead = if rest.starts_with("→ ") { 2 } else { 0 };
        out.push_str(&wrap_line(body, width, spaces + lead + 2));
        out.push_str(nl);
    }
    out
}

pub use memperf_model::text::{name, one_line};

/// Quotes arguments for a POSIX shell, so a command line copied from a
/// report runs as it ran (and runs nothing else).
pub fn shell_quote(args: &[String]) -> String {
    args.iter()
        .map(|a| {
            let plain = !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=,+@%".contains(c));
            if plain {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_never_reach_a_terminal_and_quotes_hold() {
        assert_eq!(terminal_safe("host\x1b]0;pwned\x07\n\tok\u{9b}"), "host?]0;pwned?\n\tok?");
    }

    /// Long lines wrap at words under their own text; short ones and files
    /// (no width) are left alone; a word wider than the line is cut.
    #[test]
    fn long_lines_wrap_for_a_narrow_terminal() {
        let text = "short\n  → Hot set 256MiB in the anonymous mapping at 0x7f0000000000: try hugepages\n";
        let fitted = fit(text, Some(40));
        assert!(fitted.lines().all(|l| l.chars().count() <= 40), "{fitted}");
        assert_eq!(
            fitted,
            "short\n  → Hot set 256MiB in the anonymous\n      mapping at 0x7f0000000000: try\n      hugepages\n"
        );
        assert_eq!(fit(text, None), text);
        let cut = wrap_line(&"x".repeat(50), 20, 2);
        assert!(cut.lines().all(|l| l.chars().count() <= 20), "{cut}");
        assert_eq!(cut.replace(['\n', ' '], ""), "x".repeat(50));
        let q = shell_quote(&["memperf".into(), "run".into(), "--only".into(), "a b".into(), "it's;rm -rf /".into()]);
        assert_eq!(q, "memperf run --only 'a b' 'it'\\''s;rm -rf /'");
    }
}
