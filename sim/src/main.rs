//! `ticdc-sim`: see `ticdc-sim --help` and the README.

fn main() {
    std::process::exit(ticdc_sim::cli::main_with_args(std::env::args_os()));
}
