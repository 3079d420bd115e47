//! The predicted time of one kernel launch on one TensorCore (docs/performance-model.md, "Time"):
//!
//! ```text
//! overhead + exposed + max(compute, rounds × DMA latency + streamed bytes / bandwidth)
//! ```
//!
//! `compute` is the dynamic bundles at the clock (a bundle issues per cycle; stalls on MXU results are not in it).
//! The pipeline overlaps a round's compute with the copies of the next round, which it issued at the round's start
//! and waits for at the next one: a round lasts the longer of its compute and its copies, and a copy takes the DMA
//! engine's fixed issue-to-completion latency plus its bytes at the HBM bandwidth of one core (concurrent copies
//! share the bandwidth). `exposed` is what nothing overlaps: the first block of every window fetched before the
//! first step, the last block written back after the last, and whole operands copied in before the body.

use super::estimate::Estimate;
use crate::semantic::tpu::Chip;
use serde::Serialize;

/// `min..=max` of a derived quantity (equal when the inputs are exact).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
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

    /// `n` times the interval (a program run `n` times in turn).
    pub fn times(self, n: u64) -> Interval {
        Interval { min: self.min * n as f64, max: self.max * n as f64 }
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
    /// The rounds' copies take longer than their compute, and mostly because of the DMA latency paid per round,
    /// not the bytes: larger blocks (fewer rounds) help, more bandwidth would not.
    DmaLatency,
}

impl Bound {
    /// How reports name it.
    pub fn name(self) -> &'static str {
        match self {
            Bound::Compute => "compute",
            Bound::Memory => "memory",
            Bound::DmaLatency => "DMA latency",
        }
    }
}

/// What the kernel's pipeline moves, and in how many rounds (from the Mosaic kernel: windows, DMAs, grid).
#[derive(Clone, Debug, PartialEq)]
pub struct Transfers {
    /// Rounds of copies the compute overlaps: the grid steps on which a window fetches a new block, or the runs of
    /// the most-run DMA of a kernel that copies by itself (the K loop of a manual double buffer).
    pub rounds: Estimate,
    /// Bytes no compute overlaps: each window's first block in and last block out, whole operands and scalar
    /// prefetch copied before the body.
    pub exposed_bytes: Estimate,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TimeFacts {
    pub overhead_us: Option<f64>,
    /// Dynamic bundles at the clock.
    pub compute_us: Option<Interval>,
    /// The MXU's own time: the matmuls' FLOPs at the core's peak for the format the MXU runs (f32 operands at half
    /// the bf16 rate). A program cannot issue its matmuls faster, however few its bundles.
    pub mxu_us: Option<Interval>,
    /// HBM bytes at the bandwidth of one TensorCore.
    pub memory_us: Option<Interval>,
    /// Issue-to-completion latency of one DMA, from the table's `dma_latency_cycles` at the clock.
    pub dma_latency_us: Option<f64>,
    /// The pipelined copies: a DMA latency per round plus the bytes not exposed at the bandwidth.
    pub transfer_us: Option<Interval>,
    /// The part of `transfer_us` that is latency: rounds × `dma_latency_us`.
    pub latency_us: Option<Interval>,
    /// Copies before the first and after the last step, which no compute overlaps (DMA latency included).
    pub exposed_us: Option<Interval>,
    pub predicted_us: Option<Interval>,
    /// The larger term (by upper bounds).
    pub bound: Option<Bound>,
    /// FLOPs and HBM bytes over the predicted time.
    pub achieved_tflops: Option<Interval>,
    pub achieved_gbps: Option<Interval>,
    /// Why a term is missing.
    pub unknown: Vec<String>,
}

impl TimeFacts {
    /// No time at all, for one reason: a program the model has nothing to time it with (a SparseCore kernel),
    /// where the TensorCore's terms would be numbers about the wrong core.
    pub fn untimed(why: String) -> TimeFacts {
        TimeFacts {
            overhead_us: None,
            compute_us: None,
            mxu_us: None,
            memory_us: None,
            dma_latency_us: None,
            transfer_us: None,
            latency_us: None,
            exposed_us: None,
            predicted_us: None,
            bound: None,
            achieved_tflops: None,
            achieved_gbps: None,
            unknown: vec![why],
        }
    }
}

pub fn predict(
    chip: Option<&Chip>,
    bundles: Option<&Estimate>,
    hbm: &Estimate,
    flops: &Estimate,
    transfers: &Transfers,
    mxu_us: Option<Interval>,
) -> TimeFacts {
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
    // Without a latency in the table the pipeline terms are left out: the prediction is then the roofline.
    let latency = chip.and_then(|c| Some(c.dma_latency_cycles? / (c.clock_ghz? * 1e3)));
    let pipeline = match (latency, bw, transfers.rounds.bounds(), transfers.exposed_bytes.bounds(), hbm.bounds()) {
        (Some(l), Some(gbps), Some((r0, r1)), Some((e0, e1)), Some((b0, b1))) => {
            let at = |rounds: u64, exposed: u64, bytes: u64| {
                let exposed = exposed.min(bytes);
                let streamed = (bytes - exposed) as f64 / (gbps * 1e3);
                let transfer = if bytes > exposed { rounds as f64 * l + streamed } else { 0.0 };
                let fixed = if exposed > 0 { 2.0 * l } else { 0.0 };
                let latency = if bytes > exposed { rounds as f64 * l } else { 0.0 };
                (transfer, fixed + exposed as f64 / (gbps * 1e3), latency)
            };
            let (lo, hi) = (at(r0, e0, b0), at(r1, e1, b1));
            let iv = |a: f64, b: f64| Interval { min: a, max: b };
            Some((iv(lo.0, hi.0), iv(lo.1, hi.1), iv(lo.2, hi.2)))
        }
        _ => None,
    };
    // The compute side of the max: issuing the bundles, or the MXU working through the FLOPs, whichever is longer.
    let busy = compute.map(|c| match mxu_us {
        Some(x) => Interval { min: c.min.max(x.min), max: c.max.max(x.max) },
        None => c,
    });
    let predicted = match (busy, memory) {
        (Some(c), Some(m)) => {
            let o = overhead.unwrap_or(0.0);
            Some(match pipeline {
                Some((t, e, _)) => Interval { min: o + e.min + c.min.max(t.min), max: o + e.max + c.max.max(t.max) },
                None => Interval { min: o + c.min.max(m.min), max: o + c.max.max(m.max) },
            })
        }
        _ => None,
    };
    let bound = busy.zip(memory).map(|(c, m)| match pipeline {
        Some((t, _, lat)) if t.max > c.max => {
            if 2.0 * lat.max > t.max {
                Bound::DmaLatency
            } else {
                Bound::Memory
            }
        }
        Some(_) => Bound::Compute,
        None if c.max >= m.max => Bound::Compute,
        None => Bound::Memory,
    });
    let rate = |e: &Estimate, scale: f64| {
        let p = predicted?;
        let (lo, hi) = e.bounds()?;
        (p.min > 0.0).then(|| Interval { min: lo as f64 / p.max / scale, max: hi as f64 / p.min / scale })
    };
    TimeFacts {
        overhead_us: overhead,
        compute_us: compute,
        mxu_us,
        memory_us: memory,
        dma_latency_us: latency,
        transfer_us: pipeline.map(|p| p.0),
        latency_us: pipeline.map(|p| p.2),
        exposed_us: pipeline.map(|p| p.1),
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

    fn streamed() -> Transfers {
        Transfers { rounds: Estimate::Exact(0), exposed_bytes: Estimate::Exact(0) }
    }

    #[test]
    fn the_larger_term_wins_and_the_overhead_adds() {
        let hw = Hardware::builtin();
        let t7 = hw.chip("tpu7x").unwrap();
        // 2.2 GHz: 22 000 bundles = 10 µs; 3690 GB/s per core: 36 900 bytes = 0.01 µs.
        let t = predict(
            Some(t7),
            Some(&Estimate::Exact(22_000)),
            &Estimate::Exact(36_900),
            &Estimate::Exact(16_000_000),
            &streamed(),
            None,
        );
        assert_eq!(t.compute_us, Some(Interval::point(10.0)));
        assert_eq!(t.memory_us, Some(Interval::point(0.01)));
        assert_eq!(t.bound, Some(Bound::Compute));
        assert_eq!(t.predicted_us, Some(Interval::point(16.0)));
        assert_eq!(t.achieved_tflops, Some(Interval::point(1.0)), "16 MFLOP in 16 µs");
        let m = predict(
            Some(t7),
            Some(&Estimate::Exact(22)),
            &Estimate::range(3_690_000, 7_380_000),
            &Estimate::Exact(0),
            &streamed(),
            None,
        );
        assert_eq!(m.bound, Some(Bound::Memory));
        assert_eq!(m.predicted_us, Some(Interval { min: 7.0, max: 8.0 }));
    }

    #[test]
    fn unknown_inputs_stay_unknown() {
        let hw = Hardware::builtin();
        let t = predict(hw.chip("v5e"), None, &Estimate::Exact(1), &Estimate::Exact(1), &streamed(), None);
        assert_eq!(t.predicted_us, None);
        assert!(t.unknown.iter().any(|u| u.contains("no LLO")), "{:?}", t.unknown);
        let t = predict(
            hw.chip("v5e"),
            Some(&Estimate::unknown("bound read at run time")),
            &Estimate::Exact(1),
            &Estimate::Exact(1),
            &streamed(),
            None,
        );
        assert!(t.unknown.iter().any(|u| u.contains("bound read at run time")), "{:?}", t.unknown);
        assert_eq!(
            predict(None, Some(&Estimate::Exact(1)), &Estimate::Exact(1), &Estimate::Exact(1), &streamed(), None)
                .predicted_us,
            None
        );
    }

    #[test]
    fn short_rounds_wait_for_the_dma_latency() {
        let hw = Hardware::builtin();
        let v5e = hw.chip("v5e").unwrap();
        // 1.5 GHz, 484 cycles of latency, 819 GB/s. 1000 rounds of 150 bundles (0.1 µs each) streaming 64 KiB per
        // round (0.08 µs): each round waits 0.323 + 0.08 µs for its copies, not 0.1 µs for its compute.
        let bytes = 1000 * 65_536 + 2 * 65_536;
        let t = predict(
            Some(v5e),
            Some(&Estimate::Exact(150_000)),
            &Estimate::Exact(bytes),
            &Estimate::Exact(0),
            &Transfers { rounds: Estimate::Exact(1000), exposed_bytes: Estimate::Exact(2 * 65_536) },
            None,
        );
        let l = 484.0 / 1500.0;
        assert_eq!(t.dma_latency_us, Some(l));
        let transfer = t.transfer_us.unwrap().max;
        assert!((transfer - (1000.0 * l + 1000.0 * 65_536.0 / 819e3)).abs() < 1e-6, "{transfer}");
        let exposed = t.exposed_us.unwrap().max;
        assert!((exposed - (2.0 * l + 2.0 * 65_536.0 / 819e3)).abs() < 1e-6, "{exposed}");
        assert!((t.predicted_us.unwrap().max - (6.0 + exposed + transfer)).abs() < 1e-9);
        assert_eq!(t.bound, Some(Bound::DmaLatency));
        // The same bytes in 10 rounds: the compute (100 µs) hides them.
        let big = predict(
            Some(v5e),
            Some(&Estimate::Exact(150_000)),
            &Estimate::Exact(bytes),
            &Estimate::Exact(0),
            &Transfers { rounds: Estimate::Exact(10), exposed_bytes: Estimate::Exact(2 * 65_536) },
            None,
        );
        assert_eq!(big.bound, Some(Bound::Compute));
        assert!((big.predicted_us.unwrap().max - (6.0 + exposed + 100.0)).abs() < 1e-9);
    }

    #[test]
    fn the_mxu_bounds_compute_from_below() {
        let hw = Hardware::builtin();
        let v5e = hw.chip("v5e").unwrap();
        // 1500 bundles issue in 1 µs; the MXU needs 3 µs for the FLOPs: the compute side is 3 µs.
        let mxu = Some(Interval::point(3.0));
        let t = predict(
            Some(v5e),
            Some(&Estimate::Exact(1500)),
            &Estimate::Exact(0),
            &Estimate::Exact(1),
            &streamed(),
            mxu,
        );
        assert_eq!(t.compute_us, Some(Interval::point(1.0)));
        assert_eq!(t.predicted_us, Some(Interval::point(9.0)));
        assert_eq!(t.bound, Some(Bound::Compute));
    }
}
