//! What the hardware is, as data shared by the driver, the analyses and the command line: the TPU generations
//! ([`tpu`]).

pub mod tpu;
