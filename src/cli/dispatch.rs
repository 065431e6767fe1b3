//! One parsed command carried out: the subcommands that read or write
//! documents, and the measuring ones through a [`Measurement`].

use super::measure::Measurement;
use super::{export, tools, Cli, Command};
use crate::error::Result;

/// One command, parsed: what it does, to its end. The exit status: 0, or
/// what the validation or an interrupt says (`main` maps errors to theirs).
pub fn run(cli: Cli) -> Result<u8> {
    match &cli.command {
        Command::Report(a) => return export::rebuild(&a.path, a.output.as_deref(), a.reanalyze).map(|_| 0),
        Command::Compare(a) => {
            let fail = (a.fail_on_regression, a.fail_on_unjudged);
            let (side_a, side_b) = a.sides()?;
            return export::compare(&side_a, &side_b, a.json.as_deref(), a.html.as_deref(), fail);
        }
        Command::Cleanup => return tools::cleanup(),
        Command::Completions(a) => return crate::report::sink::stdout(&super::completions(&a.shell)?).map(|_| 0),
        Command::Man(a) => return tools::man(a.output.as_deref()),
        Command::Merge(a) => return tools::merge(a),
        // A command around a program, or an option in place of measuring.
        Command::Measure(m) => {
            if let Some(done) = m.instead() {
                return done;
            }
        }
        Command::Run(_) => {}
    }
    let mut measurement = Measurement::prepare(&cli.command)?;
    measurement.execute()?;
    measurement.finish()
}
