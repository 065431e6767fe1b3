//! Every table of a document as one tidy CSV: one row per measurement,
//! one column per parameter, for pandas, R and gnuplot. Each array of
//! objects in an experiment's outcome is a table (`table` names its path,
//! e.g. `results` or `points`); each object is a row, its scalar fields
//! columns (nested objects of scalars flattened with a dot:
//! `bytes_per_s.median`); where an object holds arrays of raw samples, the
//! row becomes one row per sample (`sample` = its index; the arrays of
//! that length side by side). Columns are the union over all rows; a cell
//! a row has no value for is empty, never 0.

use crate::model::document::Document;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

type Row = BTreeMap<String, String>;

/// The CSV of every table of every completed experiment.
pub fn document(doc: &Document) -> String {
    let mut rows: Vec<Row> = Vec::new();
    for rec in &doc.experiments {
        let Some(outcome) = rec.outcome.as_ref() else { continue };
        let mut v = serde_json::to_value(outcome).expect("outcomes serialise");
        crate::report::outcome::of(outcome).refuse_in_tables(doc, &mut v);
        let mut base = Row::new();
        base.insert("host".into(), doc.origin.hostname.clone());
        if let Some(r) = doc.origin.rank {
            base.insert("rank".into(), r.to_string());
        }
        base.insert("experiment".into(), rec.name.clone());
        tables(&v, "", &base, &mut rows);
    }
    render(&rows)
}

/// Every array of objects under `v`, at `path`.
fn tables(v: &Value, path: &str, base: &Row, rows: &mut Vec<Row>) {
    match v {
        Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_object) => {
            for item in items {
                let obj = item.as_object().expect("checked");
                let mut row = base.clone();
                row.insert("table".into(), path.to_string());
                rows.extend(explode(obj, row));
                // Nested tables (a point's own list) keep their path.
                for (k, child) in obj {
                    tables(child, &join(path, k), base, rows);
                }
            }
        }
        Value::Object(map) => {
            for (k, child) in map {
                tables(child, &join(path, k), base, rows);
            }
        }
        _ => {}
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::Null => Some(String::new()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

/// One object's row, or one row per raw sample when it holds sample arrays.
fn explode(obj: &Map<String, Value>, mut row: Row) -> Vec<Row> {
    let mut series: Vec<(&String, &Vec<Value>)> = Vec::new();
    for (k, v) in obj {
        if let Some(s) = scalar(v) {
            row.insert(k.clone(), s);
        } else if let Value::Object(inner) = v {
            for (ik, iv) in inner {
                if let Some(s) = scalar(iv) {
                    row.insert(format!("{k}.{ik}"), s);
                }
            }
        } else if let Value::Array(a) = v {
            if !a.is_empty() && a.iter().all(Value::is_number) {
                series.push((k, a));
            }
        }
    }
    let Some(n) = series.iter().map(|s| s.1.len()).max() else { return vec![row] };
    (0..n)
        .map(|i| {
            let mut r = row.clone();
            r.insert("sample".into(), i.to_string());
            for (k, a) in series.iter().filter(|s| s.1.len() == n) {
                r.insert((*k).clone(), scalar(&a[i]).unwrap_or_default());
            }
            r
        })
        .collect()
}

/// The rows under the union of their columns, the identifying ones first.
fn render(rows: &[Row]) -> String {
    const FIRST: [&str; 5] = ["host", "rank", "experiment", "table", "sample"];
    let mut columns: Vec<String> = FIRST.iter().map(|c| c.to_string()).collect();
    let mut rest: Vec<String> = rows.iter().flat_map(|r| r.keys().cloned()).collect();
    rest.sort();
    rest.dedup();
    columns.extend(rest.into_iter().filter(|c| !FIRST.contains(&c.as_str())));
    let mut out = columns.iter().map(|c| super::csv::cell(c)).collect::<Vec<_>>().join(",");
    out.push('\n');
    for r in rows {
        let cells: Vec<String> =
            columns.iter().map(|c| r.get(c).map(|v| super::csv::cell(v)).unwrap_or_default()).collect();
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fixture's one bandwidth result with six samples: six rows of
    /// the `results` table, each with its sample's duration and the
    /// variant's parameters; and the headlines table, one row.
    #[test]
    fn samples_become_rows_and_parameters_columns() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/minimal-bandwidth.json");
        let doc = crate::model::document_from_json(&std::fs::read_to_string(path).unwrap()).unwrap();
        let csv = document(&doc);
        let mut lines = csv.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        assert_eq!(&header[..5], ["host", "rank", "experiment", "table", "sample"]);
        let col = |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("{name}: {header:?}"));
        let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
        let results: Vec<&Vec<&str>> = rows.iter().filter(|r| r[col("table")] == "results").collect();
        let bw = doc.outcome::<crate::model::outcome::bandwidth::Outcome>().unwrap();
        assert_eq!(results.len(), bw.results[0].samples_s.len());
        for (i, r) in results.iter().enumerate() {
            assert_eq!(r[col("sample")], i.to_string());
            assert_eq!(r[col("kernel")], "simd");
            assert_eq!(r[col("samples_s")].parse::<f64>().unwrap(), bw.results[0].samples_s[i]);
            assert_eq!(r[col("rank")], "", "no rank: an empty cell, not 0");
        }
        assert_eq!(rows.iter().filter(|r| r[col("table")] == "headlines").count(), 1);
        assert!(header.contains(&"bytes_per_s.median"));
    }
}
