//! The TPU generations as data: one table per generation in `tpu.toml` (embedded), overridable key by key by a
//! user file. The performance model reads clock, MXUs, peak rates, HBM bandwidth and the on-chip memories from it;
//! `native` says which narrow types the MXU multiplies. Values whose exact number has no public source are listed
//! in the table's `estimates` (docs/performance-model.md gives each value's source or derivation).

use serde::{Deserialize, Serialize};
use std::path::Path;

/// The built-in table.
pub const BUILTIN: &str = include_str!("tpu.toml");

/// Peak rates per chip, in TFLOPS (TOPS for integers); absent where the generation has no such mode.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Peak {
    pub bf16: Option<f64>,
    pub int8: Option<f64>,
    pub fp8: Option<f64>,
}

/// Which narrow operand types the MXU takes natively.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Native {
    pub fp8: Option<bool>,
    pub int8: Option<bool>,
    pub int4: Option<bool>,
}

/// One generation. Every number is optional: a user table may describe a chip partly, and what is missing stays
/// unknown in the model.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Chip {
    /// `tpu7x`, `v6e`, ... (the table's name).
    #[serde(default)]
    pub name: String,
    /// jax's `device_kind`.
    pub device_kind: Option<String>,
    pub tensorcores_per_chip: Option<u32>,
    pub mxus_per_core: Option<u32>,
    pub mxu_shape: Option<[u32; 2]>,
    pub clock_ghz: Option<f64>,
    #[serde(default)]
    pub peak_tflops: Peak,
    pub hbm_gbps: Option<f64>,
    pub hbm_gib: Option<f64>,
    /// Per TensorCore.
    pub vmem_mib: Option<f64>,
    /// Per TensorCore.
    pub smem_kib: Option<f64>,
    /// Fixed cost of one kernel launch, added to the predicted time.
    pub overhead_us: Option<f64>,
    /// Issue-to-completion latency of one HBM→VMEM DMA beyond its bytes at bandwidth, in TensorCore cycles: what
    /// a pipelined grid step waits for when its compute is shorter than the copies of the next step.
    pub dma_latency_cycles: Option<f64>,
    #[serde(default)]
    pub native: Native,
    /// Keys whose value is an estimate rather than a published number.
    #[serde(default)]
    pub estimates: Vec<String>,
}

impl Chip {
    fn per_core(&self, v: Option<f64>) -> Option<f64> {
        Some(v? / f64::from(self.tensorcores_per_chip.filter(|&n| n > 0)?))
    }

    /// HBM bandwidth one TensorCore gets, in GB/s: a Pallas kernel runs on one core.
    pub fn hbm_gbps_per_core(&self) -> Option<f64> {
        self.per_core(self.hbm_gbps)
    }

    /// Peak rate of one TensorCore for MXU format `fmt` (`bf16`, `int8`, `fp8`), in TFLOPS.
    pub fn peak_tflops_per_core(&self, fmt: &str) -> Option<f64> {
        let v = match fmt {
            "bf16" => self.peak_tflops.bf16,
            "int8" => self.peak_tflops.int8,
            "fp8" => self.peak_tflops.fp8,
            _ => None,
        };
        self.per_core(v)
    }

    pub fn vmem_bytes(&self) -> Option<u64> {
        self.vmem_mib.map(|m| (m * 1024.0 * 1024.0) as u64)
    }

    pub fn smem_bytes(&self) -> Option<u64> {
        self.smem_kib.map(|k| (k * 1024.0) as u64)
    }
}

/// Every known generation, in the built-in table's order, then the user's additions.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Hardware {
    pub chips: Vec<Chip>,
}

/// A `--hardware` file that cannot be used.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum HardwareError {
    #[error("cannot read hardware table {path}: {err}")]
    #[diagnostic(code(hlolint::hardware::unreadable))]
    Read { path: String, err: std::io::Error },
    #[error("hardware table {path}: {err}")]
    #[diagnostic(code(hlolint::hardware::invalid), help("docs/performance-model.md lists the keys of a generation"))]
    Parse { path: String, err: String },
}

impl Hardware {
    /// The built-in table.
    pub fn builtin() -> Hardware {
        // The embedded table is tested; a failure here is a bug in the repository, not in the input.
        Hardware::from_tables(BUILTIN, None).expect("the built-in hardware table parses")
    }

    /// The built-in table with the user's file, if any, merged over it: a key the user sets replaces the built-in
    /// one; a generation the user names that the built-in table lacks is added.
    pub fn load(user: Option<&Path>) -> Result<Hardware, HardwareError> {
        let Some(p) = user else { return Ok(Hardware::builtin()) };
        let text =
            std::fs::read_to_string(p).map_err(|err| HardwareError::Read { path: p.display().to_string(), err })?;
        Hardware::from_tables(BUILTIN, Some((&p.display().to_string(), &text)))
    }

    /// Parses `base`, merges `user` (its name and text) over it.
    pub fn from_tables(base: &str, user: Option<(&str, &str)>) -> Result<Hardware, HardwareError> {
        let parse = |path: &str, text: &str| -> Result<toml::Table, HardwareError> {
            text.parse::<toml::Table>().map_err(|e| HardwareError::Parse { path: path.into(), err: e.to_string() })
        };
        let mut table = parse("built-in", base)?;
        let mut order: Vec<(usize, String)> =
            table.keys().map(|k| (base.find(&format!("[{k}]")).unwrap_or(usize::MAX), k.clone())).collect();
        let src = user.map_or("built-in", |u| u.0).to_string();
        if let Some((path, text)) = user {
            let over = parse(path, text)?;
            for (k, v) in over {
                if !table.contains_key(&k) {
                    order.push((usize::MAX, k.clone()));
                }
                merge(table.entry(k).or_insert_with(|| toml::Value::Table(toml::Table::new())), v);
            }
        }
        order.sort();
        let mut chips = Vec::new();
        for (_, name) in order {
            let Some(v) = table.remove(&name) else { continue };
            let mut chip: Chip = v.try_into().map_err(|e: toml::de::Error| HardwareError::Parse {
                path: src.clone(),
                err: format!("[{name}]: {e}"),
            })?;
            chip.name = name;
            chips.push(chip);
        }
        Ok(Hardware { chips })
    }

    /// A generation by name (`tpu7x`) or device kind (`TPU v6 lite`), case-insensitive.
    pub fn chip(&self, name: &str) -> Option<&Chip> {
        let n = name.trim();
        self.chips.iter().find(|c| {
            c.name.eq_ignore_ascii_case(n) || c.device_kind.as_deref().is_some_and(|d| d.eq_ignore_ascii_case(n))
        })
    }
}

/// `over` replaces `base` key by key, recursively for tables.
fn merge(base: &mut toml::Value, over: toml::Value) {
    match (base, over) {
        (toml::Value::Table(b), toml::Value::Table(o)) => {
            for (k, v) in o {
                match b.get_mut(&k) {
                    Some(slot) => merge(slot, v),
                    None => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (b, o) => *b = o,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_table_names_every_generation_in_order() {
        let hw = Hardware::builtin();
        let names: Vec<&str> = hw.chips.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["tpu7x", "v6e", "v5e", "v5p", "v4"]);
        let t = hw.chip("TPU7x").unwrap();
        assert_eq!(t.peak_tflops.fp8, Some(4614.0));
        assert_eq!(t.peak_tflops_per_core("bf16"), Some(1153.5));
        assert_eq!(t.hbm_gbps_per_core(), Some(3690.0));
        assert_eq!(hw.chip("tpu v5 lite").map(|c| c.name.as_str()), Some("v5e"));
        for c in &hw.chips {
            assert!(c.clock_ghz.is_some() && c.hbm_gbps.is_some() && c.tensorcores_per_chip.is_some(), "{}", c.name);
            for e in &c.estimates {
                let known = toml::Value::try_from(c).unwrap();
                assert!(known.get(e).is_some(), "{}: `estimates` names an unknown key {e}", c.name);
            }
        }
    }

    #[test]
    fn a_user_table_replaces_keys_and_adds_generations() {
        let user = "[v5e]\nclock_ghz = 1.0\npeak_tflops = { int8 = 400 }\n[v9x]\nhbm_gbps = 10000\n";
        let hw = Hardware::from_tables(BUILTIN, Some(("mine.toml", user))).unwrap();
        let v5e = hw.chip("v5e").unwrap();
        assert_eq!(v5e.clock_ghz, Some(1.0));
        assert_eq!(v5e.peak_tflops.int8, Some(400.0));
        assert_eq!(v5e.peak_tflops.bf16, Some(197.0), "keys the user does not set stay");
        assert_eq!(hw.chips.last().map(|c| c.name.as_str()), Some("v9x"));
        assert_eq!(hw.chip("v9x").unwrap().clock_ghz, None);
    }

    #[test]
    fn errors_name_the_file_and_the_table() {
        let e = Hardware::from_tables(BUILTIN, Some(("mine.toml", "[v5e]\nclock = 1\n"))).unwrap_err().to_string();
        assert!(e.contains("mine.toml") && e.contains("[v5e]") && e.contains("clock"), "{e}");
        let e = Hardware::from_tables(BUILTIN, Some(("mine.toml", "[v5e\n"))).unwrap_err().to_string();
        assert!(e.contains("mine.toml"), "{e}");
        let missing = Hardware::load(Some(Path::new("/nonexistent/hw.toml"))).unwrap_err().to_string();
        assert!(missing.contains("/nonexistent/hw.toml"), "{missing}");
    }
}
