//! Derived metrics, defined as data: a name, formulas over event names and
//! machine figures, a unit and a description. The built-in set is
//! `metrics.json`; a user file of the same shape (`--metrics FILE`, or
//! `~/.config/memperf/metrics.json`) adds or replaces metrics without
//! recompiling. A formula is arithmetic over event names (`dTLB-load-misses`;
//! a minus between two names needs spaces) and machine figures (`seconds`,
//! `walk_ns`, `line_bytes`); the first formula whose inputs were all
//! measured is used, else the metric is "not measured", with what it lacks.

use serde::{Deserialize, Serialize};

pub use memperf_model::counters::metrics::{format_value, Metric, Outcome};
use std::collections::BTreeMap;
use std::path::Path;

/// One metric's definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Definition {
    pub name: String,
    /// Alternatives, most precise first.
    pub formula: Vec<String>,
    /// `fraction` is shown as a percentage.
    pub unit: String,
    pub description: String,
}

/// A named input of a formula, as measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Input {
    pub value: f64,
    pub scaled: bool,
    /// From a hardware counter (marked suspect with the PMU).
    pub hardware: bool,
}

#[derive(Debug, Clone, PartialEq)]
enum Expr {
    Number(f64),
    Name(String),
    Neg(Box<Expr>),
    Binary(char, Box<Expr>, Box<Expr>),
}

/// The longest formula, the deepest nesting of parentheses and signs, and
/// the most operators one may hold: far past any real metric, and bounded
/// so that parsing, evaluating and dropping a formula cannot exhaust a
/// stack (in `memperf stat` or in a program linked to libmemperf).
const MAX_FORMULA_CHARS: usize = 4096;
const MAX_DEPTH: usize = 64;
const MAX_OPERATORS: usize = 512;

struct Parser<'a> {
    text: &'a str,
    chars: Vec<char>,
    at: usize,
    depth: usize,
    operators: usize,
}

impl Parser<'_> {
    fn skip_space(&mut self) {
        while self.chars.get(self.at).is_some_and(|c| c.is_whitespace()) {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_space();
        self.chars.get(self.at).copied()
    }

    /// Counts one more operator or nesting level, refusing past the limits.
    fn grow(&mut self, nests: bool) -> Result<(), String> {
        self.operators += 1;
        self.depth += usize::from(nests);
        if self.operators > MAX_OPERATORS || self.depth > MAX_DEPTH {
            let shown: String = self.text.chars().take(40).collect();
            return Err(format!(
                "formula '{shown}…' nests deeper than {MAX_DEPTH} or holds more than {MAX_OPERATORS} operators"
            ));
        }
        Ok(())
    }

    fn expr(&mut self) -> Result<Expr, String> {
        let mut left = self.term()?;
        while let Some(op @ ('+' | '-')) = self.peek() {
            self.grow(false)?;
            self.at += 1;
            left = Expr::Binary(op, Box::new(left), Box::new(self.term()?));
        }
        Ok(left)
    }

    fn term(&mut self) -> Result<Expr, String> {
        let mut left = self.factor()?;
        while let Some(op @ ('*' | '/')) = self.peek() {
            self.grow(false)?;
            self.at += 1;
            left = Expr::Binary(op, Box::new(left), Box::new(self.factor()?));
        }
        Ok(left)
    }

    fn factor(&mut self) -> Result<Expr, String> {
        match self.peek() {
            Some('(') => {
                self.grow(true)?;
                self.at += 1;
                let e = self.expr()?;
                if self.peek() != Some(')') {
                    return Err(format!("formula '{}': a '(' is not closed", self.text));
                }
                self.at += 1;
                self.depth -= 1;
                Ok(e)
            }
            Some('-') => {
                self.grow(true)?;
                self.at += 1;
                let e = Expr::Neg(Box::new(self.factor()?));
                self.depth -= 1;
                Ok(e)
            }
            Some(c) if c.is_ascii_digit() || c == '.' => {
                let start = self.at;
                while self.chars.get(self.at).is_some_and(|c| c.is_ascii_alphanumeric() || *c == '.') {
                    self.at += 1;
                }
                let s: String = self.chars[start..self.at].iter().collect();
                s.parse().map(Expr::Number).map_err(|_| format!("formula '{}': '{s}' is not a number", self.text))
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => Ok(Expr::Name(self.name())),
            Some(c) => Err(format!("formula '{}': unexpected '{c}'", self.text)),
            None => Err(format!("formula '{}' ends where a value is needed", self.text)),
        }
    }

    /// Letters, digits, `_` and `.`; a `-` only between two name characters.
    fn name(&mut self) -> String {
        let start = self.at;
        let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.';
        while let Some(&c) = self.chars.get(self.at) {
            let dash_inside = c == '-' && self.chars.get(self.at + 1).is_some_and(|n| is_name(*n));
            if !(is_name(c) || dash_inside) {
                break;
            }
            self.at += 1;
        }
        self.chars[start..self.at].iter().collect()
    }
}

fn parse(text: &str) -> Result<Expr, String> {
    if text.chars().count() > MAX_FORMULA_CHARS {
        let shown: String = text.chars().take(40).collect();
        return Err(format!("formula '{shown}…' is longer than {MAX_FORMULA_CHARS} characters"));
    }
    let mut p = Parser { text, chars: text.chars().collect(), at: 0, depth: 0, operators: 0 };
    let e = p.expr()?;
    match p.peek() {
        None => Ok(e),
        Some(c) => Err(format!("formula '{text}': unexpected '{c}' (a minus between names needs spaces around it)")),
    }
}

fn names(e: &Expr, out: &mut Vec<String>) {
    match e {
        Expr::Number(_) => {}
        Expr::Name(n) => {
            if !out.contains(n) {
                out.push(n.clone())
            }
        }
        Expr::Neg(x) => names(x, out),
        Expr::Binary(_, a, b) => {
            names(a, out);
            names(b, out);
        }
    }
}

fn eval(e: &Expr, inputs: &BTreeMap<String, Input>) -> Result<f64, String> {
    Ok(match e {
        Expr::Number(v) => *v,
        Expr::Name(n) => inputs[n].value,
        Expr::Neg(x) => -eval(x, inputs)?,
        Expr::Binary(op, a, b) => {
            let (a, b) = (eval(a, inputs)?, eval(b, inputs)?);
            match op {
                '+' => a + b,
                '-' => a - b,
                '*' => a * b,
                _ if b == 0.0 => return Err("division by zero: a divisor counted 0".into()),
                _ => a / b,
            }
        }
    })
}

/// Formula inputs: every counted event, and the machine's figures.
pub fn inputs(
    events: &[memperf_model::outcome::stat::EventCount],
    seconds: f64,
    figures: &memperf_model::outcome::stat::MachineFigures,
) -> BTreeMap<String, Input> {
    let mut m: BTreeMap<String, Input> = events
        .iter()
        .filter_map(|e| {
            let (value, scaled) = e.status.value()?;
            Some((e.name.clone(), Input { value, scaled, hardware: !e.software }))
        })
        .collect();
    let figure = |v: f64| Input { value: v, scaled: false, hardware: false };
    m.insert("seconds".into(), figure(seconds));
    m.insert("line_bytes".into(), figure(figures.line_bytes as f64));
    if let Some(w) = figures.walk_ns {
        m.insert("walk_ns".into(), figure(w.0));
    }
    m
}

/// Evaluates one definition on what was measured.
pub fn evaluate(def: &Definition, inputs: &BTreeMap<String, Input>, pmu_suspect: bool) -> Metric {
    let mut first_missing: Option<(String, Vec<String>)> = None;
    for formula in &def.formula {
        let expr = parse(formula).expect("definitions are checked when loaded");
        let mut used = Vec::new();
        names(&expr, &mut used);
        let missing: Vec<String> = used.iter().filter(|n| !inputs.contains_key(*n)).cloned().collect();
        if !missing.is_empty() {
            first_missing.get_or_insert((formula.clone(), missing));
            continue;
        }
        let scaled = used.iter().any(|n| inputs[n].scaled);
        let suspect = pmu_suspect && used.iter().any(|n| inputs[n].hardware);
        let outcome = match eval(&expr, inputs) {
            Ok(value) if value.is_finite() => Outcome::Computed { value, scaled, suspect },
            Ok(_) => Outcome::Undefined { reason: "not a finite number".into() },
            Err(reason) => Outcome::Undefined { reason },
        };
        return Metric {
            name: def.name.clone(),
            unit: def.unit.clone(),
            description: def.description.clone(),
            formula: formula.clone(),
            outcome,
        };
    }
    let (formula, missing) = first_missing.unwrap_or_default();
    Metric {
        name: def.name.clone(),
        unit: def.unit.clone(),
        description: def.description.clone(),
        formula,
        outcome: Outcome::NotMeasured { missing },
    }
}

/// Checks a set of definitions: every formula parses, names are unique.
pub fn check(defs: &[Definition], origin: &str) -> Result<(), String> {
    let mut seen = std::collections::HashSet::new();
    for d in defs {
        if d.formula.is_empty() {
            return Err(format!("{origin}: metric '{}' has no formula", d.name));
        }
        for f in &d.formula {
            parse(f).map_err(|e| format!("{origin}: metric '{}': {e}", d.name))?;
        }
        if !seen.insert(&d.name) {
            return Err(format!("{origin}: metric '{}' is defined twice", d.name));
        }
    }
    Ok(())
}

/// The built-in definitions.
pub fn builtin() -> Vec<Definition> {
    serde_json::from_str(include_str!("metrics.json")).expect("metrics.json is valid (checked by a test)")
}

/// The user's file of definitions: `path`, or `~/.config/memperf/metrics.json`
/// (`$XDG_CONFIG_HOME` honoured) when that exists.
pub fn user_file(path: Option<&Path>) -> Option<std::path::PathBuf> {
    if let Some(p) = path {
        return Some(p.to_path_buf());
    }
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".config")))?;
    Some(base.join("memperf/metrics.json")).filter(|p| p.exists())
}

/// The built-in definitions with the user's file folded in (same name:
/// replaced; new name: appended).
pub fn load(path: Option<&Path>) -> Result<Vec<Definition>, String> {
    let mut defs = builtin();
    let Some(file) = user_file(path) else { return Ok(defs) };
    let text = crate::input::read_text(&file, crate::input::SMALL_LIMIT, "metrics file")
        .map_err(|e| format!("--metrics: {}; give a JSON list of metric definitions", e.message))?;
    let user: Vec<Definition> = serde_json::from_str(&text).map_err(|e| {
        format!(
            "--metrics {}: not a list of {{name, formula: [..], unit, description}} ({e}); see src/counters/metrics.json",
            file.display()
        )
    })?;
    check(&user, &format!("--metrics {}", file.display()))?;
    for u in user {
        match defs.iter_mut().find(|d| d.name == u.name) {
            Some(d) => *d = u,
            None => defs.push(u),
        }
    }
    Ok(defs)
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    /// A formula as a tree, rendered with every operation parenthesised.
    #[derive(Debug, Clone)]
    enum Tree {
        Number(u8),
        Name(usize),
        Neg(Box<Tree>),
        Op(char, Box<Tree>, Box<Tree>),
    }

    const NAMES: [&str; 3] = ["cycles", "dtlb-walks", "page_faults"];

    fn tree() -> impl Strategy<Value = Tree> {
        let leaf = prop_oneof![(1u8..100).prop_map(Tree::Number), (0usize..3).prop_map(Tree::Name)];
        leaf.prop_recursive(6, 64, 2, |inner| {
            prop_oneof![
                inner.clone().prop_map(|t| Tree::Neg(Box::new(t))),
                (prop::sample::select(vec!['+', '-', '*', '/']), inner.clone(), inner).prop_map(|(op, a, b)| Tree::Op(
                    op,
                    Box::new(a),
                    Box::new(b)
                )),
            ]
        })
    }

    fn text(t: &Tree) -> String {
        match t {
            Tree::Number(n) => n.to_string(),
            Tree::Name(i) => NAMES[*i].to_string(),
            Tree::Neg(x) => format!("-({})", text(x)),
            Tree::Op(op, a, b) => format!("({} {op} {})", text(a), text(b)),
        }
    }

    /// The reference: the same arithmetic, done directly on the tree.
    fn value(t: &Tree, v: &[f64; 3]) -> Result<f64, ()> {
        Ok(match t {
            Tree::Number(n) => *n as f64,
            Tree::Name(i) => v[*i],
            Tree::Neg(x) => -value(x, v)?,
            Tree::Op(op, a, b) => {
                let (a, b) = (value(a, v)?, value(b, v)?);
                match op {
                    '+' => a + b,
                    '-' => a - b,
                    '*' => a * b,
                    _ if b == 0.0 => return Err(()),
                    _ => a / b,
                }
            }
        })
    }

    proptest! {
        /// Whatever a metrics file holds as a formula, parsing ends in a
        /// value or an error: never a panic or an overflowed stack.
        #[test]
        fn any_text_parses_or_is_refused(s in "\\PC{0,300}") {
            let _ = parse(&s);
        }

        #[test]
        fn deep_or_long_formulas_are_refused_not_crashed(n in 1usize..20_000, c in prop::sample::select(vec!['(', '-', '+'])) {
            let s: String = std::iter::repeat_n(c, n).chain("1".chars()).collect();
            let _ = parse(&s);
        }

        /// A well-formed formula computes what its arithmetic says, and a
        /// zero divisor is an error on both sides.
        #[test]
        fn a_formula_computes_its_arithmetic(t in tree(), a in 1.0f64..1e6, b in 0.0f64..1e3, c in 1.0f64..10.0) {
            let s = text(&t);
            let expr = parse(&s).map_err(|e| TestCaseError::fail(format!("{s}: {e}")))?;
            let inputs: BTreeMap<String, Input> = NAMES
                .iter()
                .zip([a, b, c])
                .map(|(n, v)| (n.to_string(), Input { value: v, scaled: false, hardware: false }))
                .collect();
            let got = eval(&expr, &inputs);
            match value(&t, &[a, b, c]) {
                Ok(want) => prop_assert!(got.as_ref().is_ok_and(|g| g == &want || (g.is_nan() && want.is_nan())), "{s}: {got:?} vs {want}"),
                Err(()) => prop_assert!(got.is_err(), "{s}: {got:?}, a zero divisor"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(pairs: &[(&str, f64, bool, bool)]) -> BTreeMap<String, Input> {
        pairs.iter().map(|(n, v, s, h)| (n.to_string(), Input { value: *v, scaled: *s, hardware: *h })).collect()
    }

    fn by_name(name: &str) -> Definition {
        builtin().into_iter().find(|d| d.name == name).unwrap()
    }

    #[test]
    fn the_builtin_definitions_parse() {
        check(&builtin(), "metrics.json").unwrap();
        assert!(builtin().len() >= 10);
    }

    #[test]
    fn the_2002_arithmetic() {
        // UltraSPARC III, 2002: CPI 6.89; 259,355,115 misses × 90 cycles at
        // 750 MHz = 31 s of an 85 s run.
        let i = inputs(&[
            ("cycles", 85.0 * 750e6, false, true),
            ("instructions", 85.0 * 750e6 / 6.89, false, true),
            ("dtlb-walks", 259_355_115.0, false, true),
            ("walk_ns", 90.0 / 0.75, false, false),
            ("task-clock", 85e9, false, false),
        ]);
        let cpi = evaluate(&by_name("CPI"), &i, false);
        assert!((cpi.value().unwrap() - 6.89).abs() < 1e-9);
        let walks = evaluate(&by_name("estimated time in page walks"), &i, false);
        assert_eq!(walks.formula, "dtlb-walks * walk_ns / task-clock");
        let share = walks.value().unwrap();
        assert!((share * 85.0 - 31.12).abs() < 0.01, "{share}");
        assert_eq!(walks.display(), "36.61%");
    }

    #[test]
    fn alternatives_fall_back_and_missing_inputs_are_named() {
        let i = inputs(&[("dTLB-load-misses", 50.0, false, true), ("L1-dcache-loads", 1000.0, true, true)]);
        let m = evaluate(&by_name("DTLB miss rate per load"), &i, false);
        assert_eq!(m.formula, "dTLB-load-misses / L1-dcache-loads");
        assert_eq!(m.outcome, Outcome::Computed { value: 0.05, scaled: true, suspect: false });
        assert!(m.display().contains("scaled"));
        let none = evaluate(&by_name("CPI"), &inputs(&[("cycles", 1.0, false, true)]), false);
        assert_eq!(none.outcome, Outcome::NotMeasured { missing: vec!["instructions".into()] });
        assert_eq!(none.value(), None);
        assert_eq!(none.display(), "not measured (needs instructions)");
    }

    #[test]
    fn suspect_pmu_marks_only_hardware_inputs() {
        let i = inputs(&[("page-faults", 100.0, false, false), ("seconds", 2.0, false, false)]);
        let m = evaluate(&by_name("page faults per second"), &i, true);
        assert_eq!(m.outcome, Outcome::Computed { value: 50.0, scaled: false, suspect: false });
        let h = inputs(&[("cycles", 10.0, false, true), ("instructions", 5.0, false, true)]);
        assert!(evaluate(&by_name("CPI"), &h, true).display().contains("SUSPECT"));
    }

    #[test]
    fn zero_divisors_are_undefined_not_infinite() {
        let i = inputs(&[("cycles", 10.0, false, true), ("instructions", 0.0, false, true)]);
        assert!(matches!(evaluate(&by_name("CPI"), &i, false).outcome, Outcome::Undefined { .. }));
    }

    #[test]
    fn the_formula_language() {
        let i = inputs(&[("a-b", 6.0, false, false), ("c", 2.0, false, false)]);
        let d = |f: &str| Definition {
            name: "x".into(),
            formula: vec![f.into()],
            unit: "u".into(),
            description: String::new(),
        };
        assert_eq!(evaluate(&d("a-b - c"), &i, false).value(), Some(4.0));
        assert_eq!(evaluate(&d("(a-b + c) * -c / 4"), &i, false).value(), Some(-4.0));
        assert_eq!(evaluate(&d("1e3 * c"), &i, false).value(), Some(2000.0));
        assert!(parse("a-b -").unwrap_err().contains("ends where a value is needed"));
        assert!(parse("(a").unwrap_err().contains("not closed"));
        assert!(parse("a b").unwrap_err().contains("unexpected 'b'"));
        assert!(parse("a $ b").unwrap_err().contains("unexpected '$'"));
        // Bounded: nesting, operator count and length, each refused with a reason.
        let deep = format!("{}a{}", "(".repeat(100_000), ")".repeat(100_000));
        let long_sum = vec!["a"; 100_000].join("+");
        let signs = format!("{}a", "-".repeat(200_000));
        for f in [deep, long_sum, signs, format!("{}a{}", "(".repeat(65), ")".repeat(65)), vec!["a"; 600].join("*")] {
            let e = parse(&f).unwrap_err();
            assert!(e.contains("deeper than") || e.contains("longer than"), "{e}");
        }
        assert!(parse(&format!("{}a{}", "(".repeat(64), ")".repeat(64))).is_ok());
    }

    #[test]
    fn a_user_file_adds_and_replaces() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("m.json");
        std::fs::write(
            &f,
            r#"[{"name":"CPI","formula":["cycles / instructions / 2"],"unit":"x","description":"mine"},
            {"name":"walks per fault","formula":["dtlb-walks / page-faults"],"unit":"1","description":"new"}]"#,
        )
        .unwrap();
        let defs = load(Some(&f)).unwrap();
        assert_eq!(defs.len(), builtin().len() + 1);
        assert_eq!(defs.iter().find(|d| d.name == "CPI").unwrap().description, "mine");
        std::fs::write(&f, r#"[{"name":"bad","formula":["a +"],"unit":"x","description":""}]"#).unwrap();
        assert!(load(Some(&f)).unwrap_err().contains("metric 'bad'"));
        std::fs::write(&f, "{").unwrap();
        assert!(load(Some(&f)).unwrap_err().contains("not a list"));
        assert!(load(Some(&dir.path().join("none.json"))).unwrap_err().contains("cannot read"));
    }
}
