//! What kind of DMA failure a finding is, said once: the words a kernel author acts on. The DMA analyses
//! (`dma-balance`, `dma-double-buffering`) report by their own `kind` captures (`never-waited`, `wait-after-use`,
//! ...), which name what the simulation saw; one such kind has several causes with different fixes (a DMA never
//! waited is a prefetch missing its guard, or a `.wait()` missing altogether). [`DmaFailure`] is the cause, with
//! the help text a rule shows and the short label `compare` puts in its verdict cells; the analyses choose it
//! from what they found and pass both on as captures (`failure`, `help`).

use super::Hit;

/// The cause of a DMA finding, as the kernel author would fix it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DmaFailure {
    /// A prefetch of the next block that also runs on the last step, where nothing waits for it.
    UnguardedPrefetch,
    /// A DMA that no `.wait()` ever takes, on any step.
    MissingWait,
    /// A DMA no wait takes on some inputs: started once, in an iteration that is not its loop's last, and taken by
    /// neither that iteration nor a later one (its wait sits in a loop that runs zero times or a branch not taken,
    /// runs before it, or there is none).
    WaitNotReached,
    /// A buffer slot used while a DMA on its semaphore is in flight that nothing ever waits for.
    NeverWaited,
    /// A buffer slot read before the wait of the DMA filling it.
    ReadBeforeWait,
    /// Every refill of a buffer lands in the same slot.
    SingleSlot,
    /// Several slots, but every DMA is waited before any compute runs.
    NoOverlap,
    /// A wait with nothing outstanding on its semaphore slot.
    WaitWithoutDma,
    /// A wait that takes more than is outstanding on its semaphore.
    WaitExceedsSignals,
    /// A region written (by a store or another DMA) while a DMA into it is in flight.
    WriteBeforeWait,
    /// A DMA's source overwritten while the DMA may still be reading it.
    SourceOverwritten,
}

impl DmaFailure {
    pub const ALL: [DmaFailure; 11] = [
        DmaFailure::UnguardedPrefetch,
        DmaFailure::MissingWait,
        DmaFailure::WaitNotReached,
        DmaFailure::NeverWaited,
        DmaFailure::ReadBeforeWait,
        DmaFailure::SingleSlot,
        DmaFailure::NoOverlap,
        DmaFailure::WaitWithoutDma,
        DmaFailure::WaitExceedsSignals,
        DmaFailure::WriteBeforeWait,
        DmaFailure::SourceOverwritten,
    ];

    /// The stable name (the `failure` capture a pack's `when:` may filter on).
    pub fn name(self) -> &'static str {
        match self {
            DmaFailure::UnguardedPrefetch => "unguarded-prefetch",
            DmaFailure::MissingWait => "missing-wait",
            DmaFailure::WaitNotReached => "wait-not-reached",
            DmaFailure::NeverWaited => "never-waited",
            DmaFailure::ReadBeforeWait => "read-before-wait",
            DmaFailure::SingleSlot => "single-slot",
            DmaFailure::NoOverlap => "no-overlap",
            DmaFailure::WaitWithoutDma => "wait-without-dma",
            DmaFailure::WaitExceedsSignals => "wait-exceeds-signals",
            DmaFailure::WriteBeforeWait => "write-before-wait",
            DmaFailure::SourceOverwritten => "source-overwritten",
        }
    }

    pub fn from_name(name: &str) -> Option<DmaFailure> {
        DmaFailure::ALL.into_iter().find(|f| f.name() == name)
    }

    /// `compare`'s verdict label (`no: never-waited`): the cause in the author's words, one token so that a table
    /// cell does not wrap.
    pub fn label(self) -> &'static str {
        match self {
            DmaFailure::WaitWithoutDma => "wait-without-DMA",
            f => f.name(),
        }
    }

    /// What to change in the kernel.
    pub fn help(self) -> &'static str {
        match self {
            DmaFailure::UnguardedPrefetch => {
                "This DMA prefetches the next block and also runs on the last step, where no later step waits for \
                 it: guard the prefetch with the condition under which the next step exists (`@pl.when(k + 1 < nk)` \
                 around the `.start()`), or wait for it after the loop."
            }
            DmaFailure::MissingWait => {
                "No `.wait()` ever takes this DMA: call `.wait()` on the same copy descriptor (or one of the same size \
                 on the same semaphore slot) on every path, before its buffer is read or reused and before the kernel \
                 ends."
            }
            DmaFailure::WaitNotReached => {
                "No wait takes this DMA on these inputs: the `.wait()` written for it is not reached (it sits in a \
                 loop that runs zero times or a branch not taken — an empty sequence, a block with no work), runs \
                 before the `.start()`, or there is none. Wait for it after it starts, on every path that starts it: \
                 under the same condition as its `.start()`, or after the loop."
            }
            DmaFailure::NeverWaited => {
                "The slot is used while a DMA on its semaphore is in flight that nothing ever waits for (often a \
                 prefetch that runs on the last iteration too, whose copy a later wait takes in place of its own): \
                 guard that `.start()` with `@pl.when(k + 1 < nk)`, or wait for it before the slot is used."
            }
            DmaFailure::ReadBeforeWait => {
                "The slot is read before the wait of the DMA filling it: move the slot's `.wait()` before the first \
                 read of the slot (start the next slot's copy first, then wait on the current slot, then compute)."
            }
            DmaFailure::SingleSlot => {
                "Allocate the buffer with two slots (`pltpu.VMEM((2, bm, bk), dtype)`) and a semaphore per slot \
                 (`pltpu.SemaphoreType.DMA((2,))`); start the copy of block k+1 into slot (k+1)%2 before computing on \
                 slot k%2, and wait on a slot right before reading it."
            }
            DmaFailure::NoOverlap => {
                "Every copy is waited before any compute runs, so none is hidden: start the copy of the next block \
                 before computing on the current one, and wait on it right before reading it."
            }
            DmaFailure::WaitWithoutDma => {
                "Nothing is outstanding on this wait's semaphore slot, so it blocks forever on hardware: wait on the \
                 slot the matching `.start()` signals (the same `sem.at[...]` index), under the same condition as \
                 that start."
            }
            DmaFailure::WaitExceedsSignals => {
                "The wait takes more bytes than the DMAs outstanding on its semaphore bring, so it blocks forever: \
                 wait with the descriptor of the copy that was started (the same shape), one wait per copy."
            }
            DmaFailure::WriteBeforeWait => {
                "A DMA is still filling this region: wait for it (`.wait()` on its descriptor) before writing the \
                 region or starting another copy into it; with two slots, write or fill the other slot meanwhile."
            }
            DmaFailure::SourceOverwritten => {
                "An outgoing DMA may still be reading this region: wait for that copy before writing its source again \
                 (with two output slots, compute into the other slot while this one is sent)."
            }
        }
    }

    /// The failure a `dma-double-buffering` hit stands for, from its kind and whether the DMA in flight is waited
    /// later at all.
    pub fn of_pipeline(kind: &str, waited_later: bool) -> Option<DmaFailure> {
        Some(match kind {
            "single-slot" => DmaFailure::SingleSlot,
            "no-overlap" => DmaFailure::NoOverlap,
            "wait-after-use" if waited_later => DmaFailure::ReadBeforeWait,
            "wait-after-use" => DmaFailure::NeverWaited,
            _ => return None,
        })
    }

    /// The failure a `dma-balance` hit stands for. A transfer never waited is an unguarded prefetch when, in each
    /// grid step that left some, one instance of its op was left and the op repeats (in a loop, so the other
    /// iterations' instances were waited; or at grid level, left by the last step only); a single one left by an
    /// iteration that was not its loop's last (`started_last`, from a replay) had a wait that did not run; else
    /// its wait is missing.
    pub fn of_balance(
        kind: &str,
        left_per_step: &[usize],
        in_loop: bool,
        grid_steps: usize,
        started_last: Option<bool>,
    ) -> Option<DmaFailure> {
        Some(match kind {
            "wait-without-start" => DmaFailure::WaitWithoutDma,
            "wait-exceeds-signals" => DmaFailure::WaitExceedsSignals,
            "never-waited" if left_per_step == [1] && started_last == Some(false) => DmaFailure::WaitNotReached,
            "never-waited" => {
                let one_each = !left_per_step.is_empty() && left_per_step.iter().all(|&n| n == 1);
                let prefetch = if in_loop { one_each } else { one_each && left_per_step.len() == 1 && grid_steps > 1 };
                if prefetch {
                    DmaFailure::UnguardedPrefetch
                } else {
                    DmaFailure::MissingWait
                }
            }
            _ => return None,
        })
    }

    /// The failure a hit carries (its `failure` capture).
    pub fn of_hit(h: &Hit) -> Option<DmaFailure> {
        h.captures.get("failure").and_then(|n| DmaFailure::from_name(n))
    }

    /// Adds the `failure` and `help` captures to a hit.
    pub fn tag(self, h: Hit) -> Hit {
        h.capture("failure", self.name()).capture("help", self.help())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_texts_differ() {
        let mut helps = std::collections::BTreeSet::new();
        let mut labels = std::collections::BTreeSet::new();
        for f in DmaFailure::ALL {
            assert_eq!(DmaFailure::from_name(f.name()), Some(f));
            assert!(helps.insert(f.help()), "{f:?}: help shared with another kind");
            assert!(labels.insert(f.label()), "{f:?}: label shared with another kind");
            assert!(!f.label().contains(' '), "{f:?}: a compare cell label is one token");
        }
    }

    #[test]
    fn unguarded_prefetch_in_a_loop() {
        // one instance left per grid step by a start in an `scf.for`: the other iterations' were waited
        let f = DmaFailure::of_balance("never-waited", &[1, 1, 1], true, 16, None);
        assert_eq!(f, Some(DmaFailure::UnguardedPrefetch));
        assert!(f.unwrap().help().contains("pl.when(k + 1 < nk)"));
    }

    #[test]
    fn unguarded_prefetch_across_grid_steps() {
        // a grid-level prefetch left only by the last step
        assert_eq!(DmaFailure::of_balance("never-waited", &[1], false, 8, None), Some(DmaFailure::UnguardedPrefetch));
    }

    #[test]
    fn a_wait_not_reached_on_these_inputs() {
        // one left by the first of two iterations: no later iteration's wait took it either
        let f = DmaFailure::of_balance("never-waited", &[1], true, 1, Some(false));
        assert_eq!(f, Some(DmaFailure::WaitNotReached));
        // left by the last iteration: a prefetch of one that does not exist
        assert_eq!(
            DmaFailure::of_balance("never-waited", &[1], true, 1, Some(true)),
            Some(DmaFailure::UnguardedPrefetch)
        );
    }

    #[test]
    fn missing_wait() {
        // every iteration's transfer left
        let f = DmaFailure::of_balance("never-waited", &[4], true, 1, None);
        assert_eq!(f, Some(DmaFailure::MissingWait));
        assert!(f.unwrap().help().contains("`.wait()`"));
        // left by several grid steps, or by the only step
        assert_eq!(DmaFailure::of_balance("never-waited", &[1, 1], false, 8, None), Some(DmaFailure::MissingWait));
        assert_eq!(DmaFailure::of_balance("never-waited", &[1], false, 1, None), Some(DmaFailure::MissingWait));
    }

    #[test]
    fn wait_without_a_dma_and_exceeding_waits() {
        let f = DmaFailure::of_balance("wait-without-start", &[], false, 1, None).unwrap();
        assert_eq!((f, f.label()), (DmaFailure::WaitWithoutDma, "wait-without-DMA"));
        let f = DmaFailure::of_balance("wait-exceeds-signals", &[], false, 1, None).unwrap();
        assert_eq!(f, DmaFailure::WaitExceedsSignals);
        assert_eq!(DmaFailure::of_balance("inconclusive", &[], false, 1, None), None);
    }

    #[test]
    fn read_before_wait_and_never_waited() {
        let f = DmaFailure::of_pipeline("wait-after-use", true).unwrap();
        assert_eq!((f, f.label()), (DmaFailure::ReadBeforeWait, "read-before-wait"));
        assert!(!f.help().contains("two slots"), "a read before its wait is not a slot problem");
        let f = DmaFailure::of_pipeline("wait-after-use", false).unwrap();
        assert_eq!((f, f.label()), (DmaFailure::NeverWaited, "never-waited"));
    }

    #[test]
    fn single_slot_and_no_overlap() {
        let f = DmaFailure::of_pipeline("single-slot", true).unwrap();
        assert_eq!(f, DmaFailure::SingleSlot);
        assert!(f.help().contains("two slots"));
        assert_eq!(DmaFailure::of_pipeline("no-overlap", true), Some(DmaFailure::NoOverlap));
        assert_eq!(DmaFailure::of_pipeline("explored", true), None);
    }

    #[test]
    fn hits_carry_their_failure() {
        let at = crate::analysis::At::Span { unit: 0, span: crate::ir::Span::new(0, 1) };
        let h = DmaFailure::MissingWait.tag(Hit::new(at, "here", "a DMA is never waited"));
        assert_eq!(DmaFailure::of_hit(&h), Some(DmaFailure::MissingWait));
        assert_eq!(h.captures["help"], DmaFailure::MissingWait.help());
    }
}
