//! `hlolint compile`: the driver's options and the lint options, the driver compiling and `check` linting what
//! compiled.

use super::{CheckArgs, LintArgs};

#[derive(Debug, clap::Args)]
pub struct CompileCommand {
    #[command(flatten)]
    pub compile: crate::driver::CompileArgs,
    #[command(flatten)]
    pub lint: LintArgs,
}

pub fn compile(args: &CompileCommand) -> i32 {
    let c = &args.compile;
    crate::driver::compile(c, |hlo_files| {
        super::check::check(&CheckArgs {
            paths: hlo_files,
            format: c.format,
            output_file: None,
            quiet: c.quiet,
            verbose: false,
            all_stages: c.all_stages,
            target: None,
            summary: false,
            force_exclude: false,
            show_files: false,
            add_noqa: false,
            lint: args.lint.clone(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Wrap {
        #[command(flatten)]
        c: CompileCommand,
    }

    #[test]
    fn arguments_after_double_dash_go_to_the_module() {
        let w = Wrap::try_parse_from(["x", "examples/k", "--target", "v6e", "--rules", "v2-dma", "--", "--size", "64"])
            .unwrap();
        assert_eq!(w.c.compile.module, "examples/k");
        assert_eq!(w.c.compile.targets, ["v6e"]);
        assert_eq!(w.c.lint.rules, ["v2-dma"]);
        assert_eq!(w.c.compile.module_args, ["--size", "64"]);
        let w = Wrap::try_parse_from(["x", "examples/k"]).unwrap();
        assert!(w.c.compile.module_args.is_empty());
    }
}
