fn main() {
    std::process::exit(hlolint::cli::run());
}
