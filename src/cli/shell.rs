//! The command line describing itself: `papers completions SHELL` prints a
//! completion script, `papers man` the man page; both are generated from
//! the clap definition the parser uses.

use anyhow::Result;
use clap::{Args, CommandFactory};

use super::Cli;

/// Arguments of `papers completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

/// Prints the completion script for a shell, e.g. `papers completions bash
/// > ~/.local/share/bash-completion/completions/papers`.
pub fn completions(args: CompletionsArgs) -> Result<()> {
    let mut command = Cli::command();
    clap_complete::generate(args.shell, &mut command, "papers", &mut std::io::stdout());
    Ok(())
}

/// Prints the man page (roff), e.g. `papers man > ~/.local/share/man/man1/papers.1`.
pub fn man() -> Result<()> {
    let command = Cli::command();
    clap_mangen::Man::new(command).render(&mut std::io::stdout())?;
    Ok(())
}
