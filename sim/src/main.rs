//! `ticdc-sim`: see `ticdc-sim --help` and the README.

// A run allocates a few small objects per simulated event (messages, trace fields, timer
// entries); mimalloc serves them in about a third of glibc malloc's instructions.
// Addresses never reach a run's output, so the allocator cannot change a trace.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    // Log lines carry simulated time (each trace record starts with it); RUST_LOG filters
    // them, e.g. RUST_LOG=ticdc_sim=debug prints the whole protocol trace on stderr.
    // Without RUST_LOG no subscriber is installed: madsim enters an always-enabled span on
    // every task poll, and a subscriber's span bookkeeping costs ~8% of fuzzing time.
    if std::env::var_os("RUST_LOG").is_none() {
        std::process::exit(ticdc_sim::cli::main_with_args(std::env::args_os()));
    }
    tracing_subscriber::fmt()
        .without_time()
        .with_target(false)
        .with_writer(std::io::stderr)
        // Colour codes only for a terminal: a log piped to a file or CI stays plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .init();
    std::process::exit(ticdc_sim::cli::main_with_args(std::env::args_os()));
}
