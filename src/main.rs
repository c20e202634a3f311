//! The `papers` binary: parse the command line, run it, and turn errors into
//! one line on stderr and an exit code (0 success, 1 error, 2 usage, 130
//! interrupted).

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    match cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("papers: {err:#}");
            let cause = err.chain().find_map(|c| c.downcast_ref::<papers::Error>());
            ExitCode::from(match cause {
                Some(papers::Error::EmptyQuery | papers::Error::InvalidArgument { .. }) => 2,
                // The shell's convention for a run stopped by SIGINT.
                Some(e) if e.is_interrupt() => 130,
                _ => 1,
            })
        }
    }
}

/// Whether the error is a closed stdout (`papers search ... | head`), which
/// is not a failure.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    let kind = std::io::ErrorKind::BrokenPipe;
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == kind)
            || cause
                .downcast_ref::<papers::Error>()
                .is_some_and(|e| e.is_io(kind))
    })
}
