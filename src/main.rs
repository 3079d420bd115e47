fn main() {
    println!("hlolint: under construction");
}
