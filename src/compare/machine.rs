//! The comparison for scripts: JSON (the whole structure) and CSV (one line per fact and compilation, the shape
//! spreadsheets and dataframes pivot from).

use super::{Comparison, Row};
use serde::Serialize;

#[derive(Serialize)]
struct Doc<'a> {
    #[serde(flatten)]
    comparison: &'a Comparison,
    /// The rows about whole compilations (time, bound, rules).
    compilation: Vec<Row>,
}

pub fn json(c: &Comparison) -> String {
    let doc = Doc { comparison: c, compilation: c.compilation_rows() };
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}

/// Columns: `kernel,group,fact,version,target,dir,text,value` (`value` empty when the fact is not a number).
pub fn csv(c: &Comparison) -> Result<String, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(["kernel", "group", "fact", "version", "target", "dir", "text", "value"])?;
    let tail = c.compilation_rows();
    let blocks = c.kernels.iter().map(|k| (k.title.as_str(), &k.rows)).chain([("compilation", &tail)]);
    for (kernel, rows) in blocks {
        for r in rows {
            for (col, cell) in c.columns.iter().zip(&r.cells) {
                let value = cell.value.map(|v| v.to_string()).unwrap_or_default();
                w.write_record([kernel, &r.group, &r.label, &col.version, &col.target, &col.dir, &cell.text, &value])?;
            }
        }
    }
    let bytes = w.into_inner().map_err(|e| e.into_error())?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::sample;

    #[test]
    fn csv_round_trips_through_the_csv_crate() {
        let c = sample::comparison();
        let text = csv(&c).unwrap();
        let mut r = csv::Reader::from_reader(text.as_bytes());
        let header: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
        assert_eq!(header, ["kernel", "group", "fact", "version", "target", "dir", "text", "value"]);
        let recs: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
        let facts = c.kernels.iter().map(|k| k.rows.len()).sum::<usize>() + c.compilation_rows().len();
        assert_eq!(recs.len(), facts * c.columns.len());
        // the hostile kernel name comes back byte for byte
        let name = recs.iter().find(|x| &x[2] == "name" && &x[3] == "bug<script>").unwrap();
        assert_eq!(&name[6], "k|\"a,b\"\n<b>&amp;</b>");
        let flops = recs.iter().find(|x| &x[2] == "FLOPs" && &x[3] == "v2").unwrap();
        assert_eq!(flops[7].parse::<f64>().unwrap(), 2.68e8);
        let predicted = recs.iter().find(|x| &x[2] == "predicted" && &x[3] == "bug<script>").unwrap();
        assert_eq!((&predicted[6], &predicted[7]), ("unknown", ""));
    }

    #[test]
    fn json_has_the_columns_and_rows() {
        let c = sample::comparison();
        let v: serde_json::Value = serde_json::from_str(&json(&c)).unwrap();
        let cols = v["columns"].as_array().unwrap();
        assert_eq!(cols.len(), 4);
        assert_eq!(cols[1]["version"], "v2");
        assert_eq!(cols[1]["verdicts"]["rules"][0], "DM003");
        assert_eq!(cols[0]["time"]["compute"], 4e-6);
        assert!(cols[3]["time"].is_null());
        let rows = v["kernels"][0]["rows"].as_array().unwrap();
        assert_eq!(rows[2]["label"], "FLOPs");
        assert_eq!(rows[2]["cells"].as_array().unwrap().len(), 4);
        assert_eq!(rows[2]["cells"][0]["value"], 2.68e8);
        assert_eq!(v["kernels"][0]["timelines"][0]["region"], "region95");
        assert_eq!(v["compilation"][0]["label"], "predicted");
        assert_eq!(v["rankings"][0]["entries"][0]["version"], "v2");
    }
}
