//! Paths joined and merged: at region exits, between grid steps, and their fingerprints.

use super::*;
use std::hash::{Hash, Hasher};

/// Paths that differ only in values (no DMA inside the region they left) as one: values all paths agree on are
/// kept, others become unknown; scalar memory likewise; unknowns' intervals widened to their hull.
pub(super) fn join_values(mut states: Vec<State>) -> Option<State> {
    let mut base = states.pop()?;
    for s in &states {
        // a value absent from the environment reads as unknown
        // (a value lost here reads as unknown: a later decision on it marks the path vague itself; memory lost
        // reads back as a fresh unknown and intervals widened stay narrowable, so those make the path vague now)
        let mem = base.mem.len();
        base.env.retain(|k, v| s.env.get(k) == Some(v));
        base.mem.retain(|k, v| s.mem.get(k) == Some(v));
        base.vague |= s.vague || base.mem.len() != mem || base.atoms != s.atoms;
        if base.atoms.len() == s.atoms.len() {
            for (a, b) in base.atoms.iter_mut().zip(&s.atoms) {
                *a = (a.0.min(b.0), a.1.max(b.1));
            }
        }
        base.unknown_decisions = base.unknown_decisions.min(s.unknown_decisions);
    }
    Some(base)
}

/// Between grid steps only what the next step can see survives: outstanding transfers, scalar memory the kernel
/// stored, and which DMA ops ran. Values loaded from memory at run time are forgotten (the next load is a fresh
/// unknown: more paths, never fewer — a finding still needs every path), so paths that differ only in how they
/// got here merge.
impl Sim<'_, '_> {
    pub(super) fn between_steps(&self, states: Vec<State>) -> Vec<State> {
        let mut seen: HashMap<u64, usize> = HashMap::new();
        let mut out: Vec<State> = Vec::new();
        if self.sampling() {
            // one path: nothing to merge, and what it learned about the values it read stays (the next step reads
            // the same memory; forgetting would let it decide the same value the other way)
            return states
                .into_iter()
                .map(|mut s| {
                    s.env.clear();
                    s.ctx.clear();
                    s
                })
                .collect();
        }
        for mut s in states {
            self.retire(&mut s);
            s.env.clear();
            s.mem.retain(|_, v| !matches!(v, SimValue::Sym { .. } | SimValue::Unknown) && !is_cond(v));
            s.atoms.clear();
            s.origin.clear();
            s.ctx.clear();
            let h = {
                let mut h = std::hash::DefaultHasher::new();
                s.mem.hash(&mut h);
                s.executed.hash(&mut h);
                fail_kinds(&s).hash(&mut h);
                // which kinds of transfer are outstanding, not how many: paths that differ only in how many of
                // one kind they have in flight merge into the one with fewer (an op that leaks there leaks on
                // the other too: this can lose a finding, never make one up)
                let kinds: BTreeSet<_> = s.dmas.iter().map(|d| (d.op, &d.sems, &d.left, d.bytes, d.signal)).collect();
                kinds.hash(&mut h);
                h.finish()
            };
            match seen.get(&h) {
                Some(&i) => {
                    let o = &mut out[i];
                    let least = o.unknown_decisions.min(s.unknown_decisions);
                    // the same state reached two ways is exact if one way is; a different in-flight count is not
                    // the same state: the kept path speaks for itself
                    let same = s.dmas.len() == o.dmas.len();
                    let both = o.vague && s.vague;
                    if s.dmas.len() < o.dmas.len() {
                        *o = s;
                    }
                    let vague = if same { both } else { o.vague };
                    o.unknown_decisions = least;
                    o.vague = vague;
                }
                None => {
                    seen.insert(h, out.len());
                    out.push(s);
                }
            }
        }
        out
    }

    /// A transfer still outstanding [`RETIRE_STEPS`] grid steps after it started is never waited (software
    /// pipelines wait in the next step or the one after): it becomes a finding on this path and leaves the
    /// accounting, so paths that leaked a different number of transfers merge instead of multiplying.
    pub(super) fn retire(&self, s: &mut State) {
        let now = self.step_index;
        let old: Vec<usize> =
            (0..s.dmas.len()).filter(|&i| now.saturating_sub(s.dmas[i].step) >= RETIRE_STEPS).collect();
        for &i in old.iter().rev() {
            let d = s.dmas.remove(i);
            let key = d.sems.iter().zip(&d.left).find(|(_, &l)| l > 0).map(|(k, _)| k.clone());
            let (sem, slot) = key.as_ref().map(|k| self.describe_key(k)).unwrap_or_default();
            let at = if slot.is_empty() { String::new() } else { format!("[{slot}]") };
            let detail = format!(
            "a {} started {} signals {sem}{at} and is never waited: still outstanding {RETIRE_STEPS} grid steps later",
            if d.signal { "semaphore signal" } else { "DMA" },
            d.when
        );
            // a heuristic (no kernel seen waits further ahead), so never an exact failure
            s.fails.entry(d.op).or_insert(PathProblem {
                exact: false,
                kind: "never-waited",
                detail,
                semaphore: sem,
                slot,
                related: None,
            });
        }
    }
}

/// The failures of a path by op and kind (their wording names grid steps, which differ between mergeable paths).
pub(super) fn fail_kinds(s: &State) -> Vec<(OpId, &'static str)> {
    s.fails.iter().map(|(op, f)| (*op, f.kind)).collect()
}

/// The environment's hash, summed per entry (a map's order is arbitrary).
pub(super) fn env_hash(s: &State) -> u64 {
    s.env.iter().fold(0u64, |acc, kv| {
        let mut h = std::hash::DefaultHasher::new();
        kv.hash(&mut h);
        acc.wrapping_add(h.finish())
    })
}

/// What a path holds, but for the intervals of its unknowns and the history (`when`/trace positions) of its
/// outstanding transfers.
pub(super) fn fingerprint_but_atoms(s: &State) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    env_hash(s).hash(&mut h);
    s.atoms.len().hash(&mut h);
    for d in &s.dmas {
        (d.op, &d.sems, &d.left, d.bytes, d.signal).hash(&mut h);
    }
    (&s.mem, &s.executed, fail_kinds(s), &s.ctx, &s.step, &s.yielded).hash(&mut h);
    h.finish()
}

pub(super) fn fingerprint(s: &State) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    env_hash(s).hash(&mut h);
    (&s.atoms, &s.mem, &s.dmas, &s.trace, &s.executed, &s.fails, &s.ctx, &s.step, &s.yielded).hash(&mut h);
    h.finish()
}
