//! The `serq` command: check, print the IR of, and run serq programs.
//!
//! Architecture invariant: only this file knows clap and the process's exit
//! statuses (0 ok, 1 the program's fault, 2 a usage error); everything it
//! does goes through the library's public API.

use clap::{Args, Parser, Subcommand};
use serq::syntax::{Diagnostic, ast::Span, diagnostic::render};
use serq::{Overrides, Program, RunError};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// serq: simulate an LLM serving deployment written as a program.
///
/// A program declares memory pools (KV cache, request slots), stages
/// (engines, NICs, delays), a workload, and the path every session runs.
/// `serq run` simulates it and reports latencies, utilisations and queues.
#[derive(Parser)]
#[command(name = "serq", version, about, long_about, after_help = EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

const EXAMPLES: &str = "\
Examples:
  serq check examples/single-turn/mm1.sq      check a program without running it
  serq run examples/single-turn/mm1.sq        run it and print the report
  serq run prog.sq --seed 7 --json            another seed, the report as JSON
  serq run pd.sq --set NP=500 --set ND=500    replace `let NP` and `let ND` (array sizes too)
  serq ir prog.sq > prog.ir.json              print the linked IR (version 8)
  serq run prog.ir.json                       run IR written by serq or another tool
  serq draw pd.sq -o pd.svg                   draw the deployment as SVG

Exit status: 0 success, 1 the program's fault (a parse, link or run-time
error, printed on stderr), 2 a usage error (bad flags, unreadable file).";

#[derive(Subcommand)]
enum Command {
    /// Run a program and print its report.
    ///
    /// The flags replace the program's `run { … }` options; `--horizon`
    /// supplies one a program lacks. Example:
    ///
    ///   serq run prog.sq --seed 3 --horizon 1000 --warmup 100
    #[command(
        after_help = "Examples:\n  serq run examples/single-turn/mm1.sq --json --samples\n  serq run pd.sq --set NP=500 --set ND=500"
    )]
    Run {
        #[command(flatten)]
        file: FileArg,
        #[command(flatten)]
        sets: SetArgs,
        /// Seed of every random stream (replaces `run { seed S; }`).
        #[arg(long, value_name = "S")]
        seed: Option<u64>,
        /// Stop before any event later than T (replaces or supplies `horizon`).
        #[arg(long, value_name = "T")]
        horizon: Option<f64>,
        /// Measure over [T, end] only (replaces `warmup`).
        #[arg(long, value_name = "T")]
        warmup: Option<f64>,
        /// Stop after N open arrivals and end when the last session ends.
        #[arg(long, value_name = "N")]
        arrivals: Option<u64>,
        /// Print the report as one JSON object (the reference report's field names).
        #[arg(long)]
        json: bool,
        /// Add each observation's samples to the JSON report.
        #[arg(long, requires = "json")]
        samples: bool,
    },
    /// Check a program: print a one-line summary, or every diagnostic.
    ///
    /// Parses and links the program and checks every link rule, without
    /// running it. Example:
    ///
    ///   serq check examples/pd-disaggregation/pull_maxmin.sq
    #[command(after_help = "Example:\n  serq check pd.sq --set NP=500 --set ND=500")]
    Check {
        #[command(flatten)]
        file: FileArg,
        #[command(flatten)]
        sets: SetArgs,
    },
    /// Print the linked program as IR JSON (version 8).
    ///
    /// The IR is what the engine runs: names resolved, constants folded,
    /// sugar (`transfer`, `branch with`) rewritten. Example:
    ///
    ///   serq ir prog.sq > prog.ir.json && serq run prog.ir.json
    #[command(after_help = "Example:\n  serq ir pd.sq --set NP=500 --set ND=500 > pd500.ir.json")]
    Ir {
        #[command(flatten)]
        file: FileArg,
        #[command(flatten)]
        sets: SetArgs,
    },
    /// Draw the deployment: stations, pools and the session's path.
    ///
    /// One box per stage member, the pools above them with dashed links to
    /// the runs held inside them, the path as arrows in program order, a
    /// run over several stages as one bracketed job. Example:
    ///
    ///   serq draw examples/pd-disaggregation/pull_maxmin.sq -o pd.svg
    Draw {
        #[command(flatten)]
        file: FileArg,
        /// The drawing's format (only `svg` for now).
        #[arg(long, value_name = "FORMAT", value_parser = ["svg"], default_value = "svg")]
        format: String,
        /// Write the drawing to OUT instead of standard output.
        #[arg(short, long, value_name = "OUT")]
        out: Option<PathBuf>,
    },
}

#[derive(Args)]
struct FileArg {
    /// A program (`.sq`), or IR JSON (a file ending in `.json`).
    #[arg(value_name = "FILE")]
    path: PathBuf,
}

#[derive(Args)]
struct SetArgs {
    /// Replace the `let` constant NAME by VALUE before the program is
    /// linked (repeatable; a later --set of one name wins). Dependents see
    /// the new value: `let b = a*3+1;`, array sizes `stage P[NP]`, stage
    /// rates. VALUE is a number, `inf` or `-inf`. Only for source programs:
    /// IR has no `let`s. Example: --set NP=500 --set ND=500
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = parse_set)]
    sets: Vec<(String, f64)>,
}

/// Parses one `--set NAME=VALUE`.
fn parse_set(pair: &str) -> Result<(String, f64), String> {
    let Some((name, value)) = pair.split_once('=') else {
        return Err(format!("expected NAME=VALUE (e.g. NP=500), found `{pair}`"));
    };
    let name = name.trim();
    let is_name = name
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_alphanumeric() || c == '_');
    if !is_name {
        return Err(format!("`{name}` is not a constant's name (in `{pair}`)"));
    }
    match value.trim().parse::<f64>() {
        Ok(x) if !x.is_nan() => Ok((name.to_string(), x)),
        _ => Err(format!(
            "the value of `{name}` must be a number or `inf`, found `{value}`"
        )),
    }
}

/// Why the command failed, with the exit status it maps to.
enum Failure {
    /// The program's fault: already printed; exit 1.
    Program,
    /// A usage error (unreadable file); exit 2.
    Usage(String),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match execute(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Program) => ExitCode::from(1),
        Err(Failure::Usage(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

fn execute(command: Command) -> Result<(), Failure> {
    match command {
        Command::Check { file, sets } => {
            let input = Input::read(&file.path)?;
            let program = input.compile(&Overrides {
                sets: sets.sets,
                ..Overrides::default()
            })?;
            emit(&format!("{}: ok ({})\n", input.name, summary(&program)));
            Ok(())
        }
        Command::Ir { file, sets } => {
            let input = Input::read(&file.path)?;
            let program = input.compile(&Overrides {
                sets: sets.sets,
                ..Overrides::default()
            })?;
            emit(&format!("{}\n", program.to_json()));
            Ok(())
        }
        Command::Draw { file, format, out } => {
            let input = Input::read(&file.path)?;
            let program = input.compile(&Overrides::default())?;
            debug_assert_eq!(format, "svg", "clap admits only svg");
            let svg = serq::view::svg(&program, &input.name);
            match out {
                Some(path) => std::fs::write(&path, svg)
                    .map_err(|e| Failure::Usage(format!("cannot write `{}`: {e}", path.display()))),
                None => {
                    print!("{svg}");
                    Ok(())
                }
            }
        }
        Command::Run {
            file,
            sets,
            seed,
            horizon,
            warmup,
            arrivals,
            json,
            samples,
        } => {
            let input = Input::read(&file.path)?;
            let overrides = Overrides {
                sets: sets.sets,
                horizon,
                warmup,
                seed,
                arrivals,
            };
            let program = input.compile(&overrides)?;
            let mut report = serq::run(&program).map_err(|e| {
                eprint!("{}", input.render_run_error(&program, &e));
                Failure::Program
            })?;
            report.source_name = input.name.clone();
            if json {
                emit(&format!("{}\n", report.to_json(samples)));
            } else {
                emit(&report.to_table());
            }
            Ok(())
        }
    }
}

/// A program file as read: its display name, its text, and whether it is IR.
struct Input {
    name: String,
    text: String,
    is_ir: bool,
}

impl Input {
    fn read(path: &Path) -> Result<Input, Failure> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Failure::Usage(format!("cannot read `{}`: {e}", path.display())))?;
        Ok(Input {
            name: path.display().to_string(),
            text,
            is_ir: path.extension().is_some_and(|e| e == "json"),
        })
    }

    fn compile(&self, overrides: &Overrides) -> Result<Program, Failure> {
        if self.is_ir {
            serq::compile_ir(&self.text, overrides).map_err(|errors| {
                for e in &errors {
                    eprintln!("error: {}: {e}", self.name);
                }
                Failure::Program
            })
        } else {
            serq::compile_source(&self.text, overrides).map_err(|diagnostics| {
                eprint!("{}", render(&diagnostics, &self.name, &self.text));
                eprintln!("{} error(s) in {}", diagnostics.len(), self.name);
                Failure::Program
            })
        }
    }

    /// A run-time error: its message, the statement's place (with the
    /// source line and a caret when the program came from source), the
    /// session and the time.
    fn render_run_error(&self, program: &Program, e: &RunError) -> String {
        let who = match e.session {
            Some(serial) => format!(" in session {serial}"),
            None => String::new(),
        };
        let message = format!("run-time error{who} at t = {}: {}", e.time, e.message);
        let position = e.at.and_then(|(b, i)| {
            let positions = program.positions.as_ref()?;
            positions.get(b)?.get(i).copied()
        });
        match (position, self.is_ir) {
            (Some(pos), false) => {
                let start = byte_offset(&self.text, pos.line, pos.col);
                let span = Span {
                    start,
                    end: start + 1,
                };
                let d = Diagnostic::new("run-time", span, message).with_label("this statement");
                render(&[d], &self.name, &self.text)
            }
            _ => match e.at {
                Some((b, i)) => format!(
                    "error: {}: block {b}, statement {i}: {message}\n",
                    self.name
                ),
                None => format!("error: {}: {message}\n", self.name),
            },
        }
    }
}

/// The byte offset of a 1-based line and character column.
fn byte_offset(text: &str, line: u32, col: u32) -> u32 {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1) as usize)
        .map(str::len)
        .sum();
    let rest = &text[line_start.min(text.len())..];
    let within: usize = rest
        .chars()
        .take(col.saturating_sub(1) as usize)
        .map(char::len_utf8)
        .sum();
    (line_start + within) as u32
}

/// The one-line summary `serq check` prints.
fn summary(program: &Program) -> String {
    let count = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let mut parts = vec![
        count(program.stages.len(), "stage"),
        count(program.pools.len(), "pool"),
        count(program.observes.len(), "observation"),
        count(program.blocks.iter().map(Vec::len).sum(), "statement"),
    ];
    if let Some(share) = program.share {
        parts.push(format!(
            "share {}",
            if share == serq::ir::Share::MaxMin {
                "maxmin"
            } else {
                "bottleneck"
            }
        ));
    }
    parts.push(format!("horizon {}", program.horizon));
    parts.join(", ")
}

/// Writes the command's output to stdout; a closed pipe (`serq ir f | head`)
/// ends the output quietly instead of panicking as `print!` would.
fn emit(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}
