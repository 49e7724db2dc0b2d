fn main() {
    println!("ticdc-sim: CLI under construction");
}
