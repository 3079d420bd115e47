//! `hlolint check`: expand inputs → read and sniff → parse (in parallel) → summary per file, errors per file.

use super::{CheckArgs, GraphArgs, OutputFormat};
use crate::source::{self, Format};
use crate::summary::{graph_dump, render_file, summarize_file, FileSummary};
use rayon::prelude::*;
use serde::Serialize;

/// What happened to one input.
enum Outcome {
    Parsed { path: String, summary: FileSummary, problems: Vec<miette::Report> },
    Failed(miette::Report),
    Skipped,
}

#[derive(Serialize)]
struct JsonFile<'a> {
    path: &'a str,
    #[serde(flatten)]
    summary: &'a FileSummary,
}

#[derive(Serialize)]
struct JsonError {
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    offset: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    expected: Option<String>,
}

pub fn check(args: &CheckArgs) -> i32 {
    let (candidates, input_errors) = source::expand(&args.paths, args.all_stages);
    let mut reports: Vec<miette::Report> = input_errors.into_iter().map(miette::Report::new).collect();
    let outcomes: Vec<Outcome> = candidates.par_iter().map(process).collect();
    let mut files = Vec::new();
    for o in outcomes {
        match o {
            Outcome::Parsed { path, summary, problems } => {
                files.push((path, summary));
                reports.extend(problems);
            }
            Outcome::Failed(r) => reports.push(r),
            Outcome::Skipped => {}
        }
    }
    match args.format {
        OutputFormat::Human => {
            if !args.quiet {
                for (path, s) in &files {
                    print!("{}", render_file(path, s));
                }
                print!("{}", crate::summary::link::render(&crate::summary::link::link(&files)));
            }
            for r in &reports {
                eprintln!("{r:?}");
            }
            if !args.quiet {
                eprintln!("{} file(s) parsed, {} error(s)", files.len(), reports.len());
            }
        }
        OutputFormat::Json => {
            let json_files: Vec<JsonFile> = files.iter().map(|(path, summary)| JsonFile { path, summary }).collect();
            let errors: Vec<JsonError> = reports.iter().map(json_error).collect();
            let linked = crate::summary::link::link(&files);
            let doc = serde_json::json!({ "files": json_files, "linked": linked, "errors": errors });
            println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        }
    }
    if !reports.is_empty() || (files.is_empty() && args.paths.iter().all(|p| p.is_dir())) {
        if files.is_empty() && reports.is_empty() {
            eprintln!("error: no XLA dump found in the given directories");
        }
        2
    } else {
        0
    }
}

fn process(c: &source::Candidate) -> Outcome {
    let file = match source::load(c) {
        Ok(Some(f)) => f,
        Ok(None) => return Outcome::Skipped,
        Err(e) => return Outcome::Failed(miette::Report::new(e)),
    };
    match summarize_file(&file) {
        Ok((summary, problems)) => Outcome::Parsed { path: file.path.clone(), summary, problems },
        Err(r) => Outcome::Failed(r),
    }
}

fn json_error(r: &miette::Report) -> JsonError {
    let se = r.downcast_ref::<crate::parse::error::SyntaxError>();
    JsonError {
        message: r.to_string(),
        path: se.map(|e| e.src.name().to_string()),
        offset: se.map(|e| e.span.offset()),
        expected: se.map(|e| e.expected.clone()),
    }
}

pub fn graph(args: &GraphArgs) -> i32 {
    let (candidates, input_errors) = source::expand(&args.paths, false);
    let mut code = 0;
    for e in input_errors {
        eprintln!("{:?}", miette::Report::new(e));
        code = 2;
    }
    for c in &candidates {
        let file = match source::load(c) {
            Ok(Some(f)) => f,
            Ok(None) => continue,
            Err(e) => {
                eprintln!("{:?}", miette::Report::new(e));
                code = 2;
                continue;
            }
        };
        let module = match file.format {
            Format::Hlo => crate::parse::hlo::parse_hlo(&file.path, &file.text).map(Some),
            Format::Mlir => crate::parse::mlir::parse_mlir(&file.path, &file.text).map(Some),
            Format::Llo => crate::parse::llo::parse_llo(&file.path, &file.text).map(|f| match f {
                crate::parse::llo::LloFile::Bundles(p) => Some(p.module),
                _ => None,
            }),
        };
        match module {
            Ok(Some(m)) => println!("{}", serde_json::to_string(&graph_dump(&m)).unwrap_or_default()),
            Ok(None) => eprintln!("{}: a table, not a graph; skipped", file.path),
            Err(e) => {
                eprintln!("{:?}", miette::Report::new(e));
                code = 2;
            }
        }
    }
    code
}
