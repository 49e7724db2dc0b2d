//! Quick seed sweep used during development: `cargo run --release --example sweep -- <scenario.toml> <from> <to> [bug...]`.
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let s: ticdc_sim::scenario::Scenario = toml::from_str(&std::fs::read_to_string(&a[1]).unwrap()).unwrap();
    let (from, to): (u64, u64) = (a[2].parse().unwrap(), a[3].parse().unwrap());
    let mut bugs = core_sched::bugs::Bugs::none();
    for b in &a[4..] {
        bugs = bugs.with(core_sched::bugs::Bug::from_name(b).unwrap());
    }
    let t = std::time::Instant::now();
    let mut fails = 0;
    for seed in from..to {
        let r = ticdc_sim::runner::run_on_fresh_thread(&s, seed, &bugs, &Default::default());
        if r.outcome != ticdc_sim::result::Outcome::Pass {
            fails += 1;
            if fails <= 5 {
                println!("seed {} {:?} {:?} {:?}", seed, r.outcome, r.violations.first(), r.crash);
            }
        }
    }
    println!("{} seeds, {} failures, {:.1} seeds/s", to - from, fails, (to - from) as f64 / t.elapsed().as_secs_f64());
}
