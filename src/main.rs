fn main() {
    std::process::exit(hlolint::cli::run());
}

// Parsing builds many small nodes; mimalloc is markedly faster than the system allocator at that.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
