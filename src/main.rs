fn main() {
    keep_freed_memory();
    std::process::exit(hlolint::main());
}

// Parsing builds many small nodes; mimalloc is markedly faster than the system allocator at that.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc.h (the same index in mimalloc 2 and 3; the Rust bindings name no constant).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Memory a compilation freed stays with the process for the next one. By default mimalloc returns it to the OS a
/// second later, and the next compilation faults it in again, zeroed page by page: in a profile of the whole corpus
/// that re-faulting was over half of the run (docs/performance.md). A lint run is short, and its peak is what it
/// is either way.
fn keep_freed_memory() {
    // SAFETY: sets one integer option of the allocator, before any thread but this one exists.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
}
