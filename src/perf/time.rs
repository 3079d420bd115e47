//! The predicted time of one kernel launch on one TensorCore:
//! `overhead + max(dynamic bundles / clock, HBM bytes / HBM bandwidth per core)`, with the bound that wins and the
//! rates it implies. A bundle issues per cycle, so the compute term counts cycles the program cannot avoid (stalls
//! on DMA waits and MXU results are not in it); the memory term assumes the DMAs reach peak bandwidth.

use super::estimate::Estimate;
use crate::semantic::tpu::Chip;
use serde::Serialize;

/// `min..=max` of a derived quantity (equal when the inputs are exact).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Interval {
    pub min: f64,
    pub max: f64,
}

impl Interval {
    pub fn point(v: f64) -> Interval {
        Interval { min: v, max: v }
    }

    pub fn plus(self, o: Interval) -> Interval {
        Interval { min: self.min + o.min, max: self.max + o.max }
    }

    fn of(e: &Estimate, f: impl Fn(f64) -> f64) -> Option<Interval> {
        e.bounds().map(|(a, b)| Interval { min: f(a as f64), max: f(b as f64) })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Bound {
    Compute,
    Memory,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TimeFacts {
    pub overhead_us: Option<f64>,
    /// Dynamic bundles at the clock.
    pub compute_us: Option<Interval>,
    /// HBM bytes at the bandwidth of one TensorCore.
    pub memory_us: Option<Interval>,
    pub predicted_us: Option<Interval>,
    /// The larger term (by upper bounds).
    pub bound: Option<Bound>,
    /// FLOPs and HBM bytes over the predicted time.
    pub achieved_tflops: Option<Interval>,
    pub achieved_gbps: Option<Interval>,
    /// Why a term is missing.
    pub unknown: Vec<String>,
}

pub fn predict(chip: Option<&Chip>, bundles: Option<&Estimate>, hbm: &Estimate, flops: &Estimate) -> TimeFacts {
    let mut unknown = Vec::new();
    let mut miss = |why: String| unknown.push(why);
    let clock = chip.and_then(|c| c.clock_ghz);
    let bw = chip.and_then(Chip::hbm_gbps_per_core);
    if chip.is_none() {
        miss("the target is unknown or not in the hardware table".into());
    }
    let compute = match (bundles, clock) {
        (Some(b), Some(ghz)) => Interval::of(b, |n| n / (ghz * 1e3)).or_else(|| {
            miss(format!("dynamic bundles: {}", b.reason().unwrap_or("unknown")));
            None
        }),
        (None, _) => {
            miss("no LLO dump: dynamic bundles unknown".into());
            None
        }
        (_, None) => None,
    };
    let memory = bw.and_then(|gbps| {
        Interval::of(hbm, |n| n / (gbps * 1e3)).or_else(|| {
            miss(format!("HBM bytes: {}", hbm.reason().unwrap_or("unknown")));
            None
        })
    });
    let overhead = chip.and_then(|c| c.overhead_us);
    let predicted = match (compute, memory) {
        (Some(c), Some(m)) => {
            let o = overhead.unwrap_or(0.0);
            Some(Interval { min: o + c.min.max(m.min), max: o + c.max.max(m.max) })
        }
        _ => None,
    };
    let bound = compute.zip(memory).map(|(c, m)| if c.max >= m.max { Bound::Compute } else { Bound::Memory });
    let rate = |e: &Estimate, scale: f64| {
        let p = predicted?;
        let (lo, hi) = e.bounds()?;
        (p.min > 0.0).then(|| Interval { min: lo as f64 / p.max / scale, max: hi as f64 / p.min / scale })
    };
    TimeFacts {
        overhead_us: overhead,
        compute_us: compute,
        memory_us: memory,
        predicted_us: predicted,
        bound,
        achieved_tflops: rate(flops, 1e6),
        achieved_gbps: rate(hbm, 1e3),
        unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::semantic::tpu::Hardware;

    #[test]
    fn the_larger_term_wins_and_the_overhead_adds() {
        let hw = Hardware::builtin();
        let t7 = hw.chip("tpu7x").unwrap();
        // 2.2 GHz: 22 000 bundles = 10 µs; 3690 GB/s per core: 36 900 bytes = 0.01 µs.
        let t =
            predict(Some(t7), Some(&Estimate::Exact(22_000)), &Estimate::Exact(36_900), &Estimate::Exact(16_000_000));
        assert_eq!(t.compute_us, Some(Interval::point(10.0)));
        assert_eq!(t.memory_us, Some(Interval::point(0.01)));
        assert_eq!(t.bound, Some(Bound::Compute));
        assert_eq!(t.predicted_us, Some(Interval::point(16.0)));
        assert_eq!(t.achieved_tflops, Some(Interval::point(1.0)), "16 MFLOP in 16 µs");
        let m =
            predict(Some(t7), Some(&Estimate::Exact(22)), &Estimate::range(3_690_000, 7_380_000), &Estimate::Exact(0));
        assert_eq!(m.bound, Some(Bound::Memory));
        assert_eq!(m.predicted_us, Some(Interval { min: 7.0, max: 8.0 }));
    }

    #[test]
    fn unknown_inputs_stay_unknown() {
        let hw = Hardware::builtin();
        let t = predict(hw.chip("v5e"), None, &Estimate::Exact(1), &Estimate::Exact(1));
        assert_eq!(t.predicted_us, None);
        assert!(t.unknown.iter().any(|u| u.contains("no LLO")), "{:?}", t.unknown);
        let t = predict(
            hw.chip("v5e"),
            Some(&Estimate::unknown("bound read at run time")),
            &Estimate::Exact(1),
            &Estimate::Exact(1),
        );
        assert!(t.unknown.iter().any(|u| u.contains("bound read at run time")), "{:?}", t.unknown);
        assert_eq!(
            predict(None, Some(&Estimate::Exact(1)), &Estimate::Exact(1), &Estimate::Exact(1)).predicted_us,
            None
        );
    }
}
