fn main() {
    let path = std::env::args().nth(1).unwrap();
    let seed: u64 = std::env::args().nth(2).unwrap().parse().unwrap();
    let s: ticdc_sim::scenario::Scenario = toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let r = ticdc_sim::runner::run_on_fresh_thread(&s, seed, &Default::default(), &ticdc_sim::runner::RunOptions { verbose: std::env::var("V").is_ok(), inject_nondeterminism: false });
    for t in r.trace.iter().take(0) { println!("{}", t.line()); }
    println!("{:?} {:?} hash={} sim={} wall={} events={}", r.outcome, r.violations, r.trace_hash, r.sim_time_ms, r.wall_ms, r.events);
    for c in &r.checks { println!("{:?}", c); }
    if let Some(c) = r.crash { println!("CRASH {}", c); }
}
