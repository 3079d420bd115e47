//! The kernel's scalar-prefetch memory and run-time grid as its host program fixes them.

use super::exec::{Base, Engine, Val};
use super::host::{self, Elem};
use super::term::Lin;
use crate::semantic::kernel;
use std::collections::BTreeMap;

/// Scalar-prefetch operands whose values are fixed (by the host program, or a replay's inputs): kernel argument →
/// its elements, row-major.
pub type Seed = BTreeMap<usize, Vec<i64>>;

/// The elements of a seeded operand of shape `dims`, each with its index (`vals` row-major); nothing when the
/// shape does not hold exactly that many.
pub fn elements<'v>(dims: &[i64], vals: &'v [i64]) -> impl Iterator<Item = (Vec<i64>, i64)> + 'v {
    let dims = dims.to_vec();
    let fits = dims.iter().product::<i64>() == vals.len() as i64;
    vals.iter().enumerate().filter(move |_| fits).map(move |(flat, &v)| (index_of(&dims, flat), v))
}

/// The index of element `flat` (row-major) of an array of shape `dims`.
pub fn index_of(dims: &[i64], flat: usize) -> Vec<i64> {
    let mut idx = vec![0i64; dims.len()];
    let mut rest = flat as i64;
    for (d, n) in dims.iter().enumerate().rev() {
        idx[d] = rest % n.max(&1);
        rest /= n.max(&1);
    }
    idx
}

/// What the host program that calls kernel `k` fixes about its scalar-prefetch tables and run-time grid sizes
/// ([`kernel::HostFacts`]), read from the HLO or StableHLO that calls it ([`super::host`]).
pub fn host_facts(c: &crate::lint::Compilation<'_>, unit: usize, k: &kernel::Kernel<'_>) -> kernel::HostFacts {
    let mut facts = kernel::HostFacts::default();
    let Some((hu, call)) = crate::analysis::pipelining::host_call(c, unit, k.name) else { return facts };
    let Some(host) = c.units.get(hu) else { return facts };
    let hm = &host.module;
    let operands = &hm.op(call).operands;
    let grid = k.iteration_bounds.len();
    let tables: Vec<Vec<Elem>> = (0..k.scalar_prefetch)
        .map(|j| operands.get(k.host_operand(j)).and_then(|o| host::elements(hm, o.def)).unwrap_or_default())
        .collect();
    // each leaf the host passes as a table element of its own (plus a constant): where a grid size finds it
    let mut found: BTreeMap<host::Leaf, (i64, usize, usize)> = BTreeMap::new();
    for (j, t) in tables.iter().enumerate() {
        let consts: Vec<i64> = t.iter().filter_map(Elem::as_const).collect();
        if !t.is_empty() && consts.len() == t.len() {
            facts.tables.insert(grid + j, consts);
            continue;
        }
        for (i, e) in t.iter().enumerate() {
            match (e.as_const(), e.terms.iter().next()) {
                (Some(v), _) => _ = facts.constants.insert((grid + j, i), v),
                (None, Some((&l, 1))) if e.terms.len() == 1 => _ = found.entry(l).or_insert((e.konst, grid + j, i)),
                _ => {}
            }
        }
    }
    // (Pallas passes the bound of each dimension known only at run time first, in order)
    let dynamic = k.iteration_bounds.iter().enumerate().filter(|b| *b.1 < 0).map(|b| b.0);
    for (n, d) in dynamic.enumerate() {
        let Some(size) = operands.get(n).and_then(|o| host::elements(hm, o.def)) else { continue };
        let [size] = &size[..] else { continue };
        let mut sum = kernel::TableSum { konst: size.konst, terms: Vec::new() };
        let tied = size.terms.iter().all(|(l, &c)| {
            let Some(&(k0, arg, at)) = found.get(l) else { return false };
            // leaf = element − k0
            sum.terms.push((c, arg, at));
            c.checked_mul(k0).and_then(|x| sum.konst.checked_sub(x)).map(|x| sum.konst = x).is_some()
        });
        if tied {
            facts.grid.insert(d, sum);
        }
    }
    facts
}

/// Host facts into the engine's memory and grid.
impl Engine<'_, '_> {
    /// Whole tables in memory before the kernel runs: the host's constants (a buffer index of 0 and an init flag
    /// of 1 in jax's paged attention), or a replay's inputs — not inputs a witness may choose.
    pub fn seed(&mut self, seed: &Seed) {
        for (&arg, vals) in seed {
            let Some(dims) = self.arg_dims(arg) else { continue };
            for (idx, v) in elements(&dims, vals) {
                self.fix(arg, idx, v);
            }
        }
    }

    /// The elements the host passes as constants in tables it does not fix whole ([`kernel::HostFacts`]).
    pub fn seed_host(&mut self, host: &kernel::HostFacts) {
        for (&(arg, at), &v) in &host.constants {
            let Some(dims) = self.arg_dims(arg) else { continue };
            self.fix(arg, index_of(&dims, at), v);
        }
    }

    /// Element `idx` of table argument `arg` holds `v` when the kernel starts.
    fn fix(&mut self, arg: usize, idx: Vec<i64>, v: i64) {
        let idx = idx.into_iter().map(Lin::int).collect();
        self.mem.stores.push((Base::Arg(arg), idx, Val::Int(Lin::int(v))));
    }

    /// A sum of table elements as the kernel reads them; `None` when a table is not an array of integers.
    pub fn table_sum(&mut self, sum: &kernel::TableSum) -> Option<Lin> {
        let mut out = Lin::int(sum.konst);
        for &(c, arg, at) in &sum.terms {
            let idx = index_of(&self.arg_dims(arg)?, at).into_iter().map(Lin::int).collect();
            let Val::Int(x) = self.load(Base::Arg(arg), idx) else { return None };
            out = out.add_scaled(&x, c)?;
        }
        Some(out)
    }
}
