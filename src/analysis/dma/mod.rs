//! The DMA engine: a proof (or a witness) that a Mosaic kernel waits every DMA it starts, for all inputs.
//!
//! Values read at run time are symbols ([`term`]), branches are guards and loops and the grid are checked by
//! induction ([`control`], [`induct`]), and every question — does this wait have its DMA, can this DMA outlive the grid — is
//! a satisfiability question over integers ([`solve`]). No grid step, trip count or table value is enumerated:
//! what holds is proven for every input, and what fails comes with values that make it fail.
//! docs/dma-semantics.md says what is counted and why; the analyses that call this are `dma-balance` (and,
//! through the same facts, later `dma-double-buffering`).

mod account;
mod arith;
pub mod assume;
pub(crate) mod control;
mod exec;
mod host;
pub(crate) mod induct;
pub mod race;
pub mod replay;
pub mod seed;
mod shift;
mod size;
pub mod solve;
mod summary;
pub mod term;
mod under;
mod witness;

use exec::{key, Engine, Val};
pub use exec::{Base, Problem, SemKey};
pub use replay::Inputs;
pub use seed::{host_facts, Seed};
use term::{Atom, Cond, Lin, Sym};
pub use under::Excluded;

use crate::ir::*;
use crate::semantic::kernel;

/// How the variable of a run-time grid size is named, before its dimension (a replay sizes the grid from it).
pub(crate) const GRID_SIZE: &str = "the grid's size along dimension ";

/// Work units (questions, case splits, eliminations) the decision procedure may spend on one kernel: the real
/// kernels of the corpus need at most a few thousand; past it the kernel is inconclusive, never clean.
pub const BUDGET: u64 = 40_000;

/// What the engine concluded about one kernel.
pub struct Outcome {
    /// Failures found (exact ones are reached by some input; the others need values the engine lost).
    pub problems: Vec<Problem>,
    /// Why the rest is not a proof, when it is not.
    pub unknown: Option<(OpId, String)>,
    /// Why the race verdict is not a proof where the balance one may be ([`race`]).
    pub race_unknown: Option<(OpId, String)>,
    /// Everything was decided except DMAs outstanding across more than one iteration: failures in the first
    /// iterations ([`Problem::first`]) are still proven.
    pub only_across_iterations: bool,
    /// Ops evaluated.
    pub steps: u64,
    /// Names of buffers, for messages.
    pub bufs: Vec<Base>,
    names: Vec<String>,
    /// The same buffers as the dump names them.
    dump_names: Vec<String>,
    /// The kernel's arguments as its author named them, by position (semaphores a wait names but no load reads).
    python: Vec<Option<String>>,
    /// Variables of the kernel's scalar arguments, by argument (a replay sets them).
    scalar_args: std::collections::HashMap<u32, usize>,
    /// The buffers DMAs copy to or from, as the author and as the dump names them (races name them).
    copied: Vec<(Base, String, String)>,
    /// Per DMA start that refills its target in a loop or across grid steps: whether the region changes from one
    /// iteration to the next (`None`: undecided somewhere).
    pub refilled: std::collections::BTreeMap<OpId, Option<bool>>,
    /// Per DMA start a wait took: whether compute ran while it was in flight.
    pub overlapped: std::collections::HashMap<OpId, bool>,
    /// Each DMA start's target, as the kernel names it.
    pub targets: Vec<(OpId, Base)>,
    /// The same variables as terms, by argument (assumptions name them).
    scalar_vars: std::collections::BTreeMap<usize, Lin>,
    /// The static shape of each table argument.
    table_dims: std::collections::BTreeMap<usize, Vec<i64>>,
    /// Failures only inputs the kernel's assumptions exclude reach (proven without them).
    pub excluded: Vec<Excluded>,
    /// The assumptions the kernel was checked under, as written.
    pub assumed: Vec<String>,
}

/// Checks kernel `k` of `m`, its scalar-prefetch memory starting as its host fixes it (`k.host`; the rest is
/// input), under the
/// input assumptions `assumed` (bound to `k`'s arguments). Failures the symbolic run finds but cannot prove are
/// replayed on their witness's inputs ([`replay`](mod@replay)); with assumptions, a failure only inputs they
/// exclude reach is set apart ([`Outcome::excluded`]) and the others' witnesses are inputs they allow.
pub fn check<'a>(m: &Module<'a>, k: &kernel::Kernel<'a>, assumed: &[assume::Bound]) -> Outcome {
    solve::set_budget(budget());
    term::forget_atoms();
    let mut e = Engine::new(m, k);
    e.seed(&k.host.tables);
    walk(&mut e, k);
    let mut out = finish(e);
    out.table_dims = k.args.iter().filter_map(|a| Some((a.index, a.ty.as_ref()?.shaped()?.static_dims()?))).collect();
    out.assumed = assumed.iter().map(|b| b.text.clone()).collect();
    if out.problems.is_empty() {
        return out;
    }
    // balance and races each get their replays and their verdicts under the assumptions, apart (one kind of
    // failure shown does not show the other)
    let (races, balance): (Vec<Problem>, Vec<Problem>) =
        std::mem::take(&mut out.problems).into_iter().partition(|p| race::is_race(p.kind));
    let balance_kind = |p: &Problem| !race::is_race(p.kind);
    let race_kind = |p: &Problem| race::is_race(p.kind);
    let mut judged = Vec::new();
    for (problems, which) in [(balance, &balance_kind as &dyn Fn(&Problem) -> bool), (races, &race_kind)] {
        if problems.is_empty() {
            continue;
        }
        out.problems = problems;
        if assumed.is_empty() {
            replay::confirm(&mut out, m, k, &[], which);
        } else {
            // the questions about assumptions get a budget of their own, whatever the walk spent
            solve::set_budget(budget());
            under::judge(&mut out, m, k, assumed, which);
        }
        judged.append(&mut out.problems);
    }
    out.problems = judged;
    out
}

thread_local! {
    /// The last few kernels' outcomes: `dma-balance` and `dma-race` read the same run.
    static CHECKED: std::cell::RefCell<Vec<(u64, std::rc::Rc<Outcome>)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// What the analyses calling [`check_shared`] share ([`super::Analysis::shares`]).
pub const SHARED_RUN: &str = "the symbolic DMA run";

/// [`check`], run once per kernel text, function, host facts and assumptions however many analyses ask (a lint thread checks one
/// compilation's kernels rule by rule).
pub fn check_shared<'a>(m: &Module<'a>, k: &kernel::Kernel<'a>, assumed: &[assume::Bound]) -> std::rc::Rc<Outcome> {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (m.text, k.func.0, &k.host, budget()).hash(&mut h);
    assumed.iter().for_each(|b| b.text.hash(&mut h));
    let key = h.finish();
    if let Some(out) = CHECKED.with(|c| c.borrow().iter().find(|(k, _)| *k == key).map(|(_, o)| o.clone())) {
        return out;
    }
    let out = std::rc::Rc::new(check(m, k, assumed));
    CHECKED.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= 8 {
            c.remove(0);
        }
        c.push((key, out.clone()));
    });
    out
}

fn budget() -> u64 {
    std::env::var("HLOLINT_DMA_BUDGET").ok().and_then(|b| b.parse().ok()).unwrap_or(BUDGET)
}

/// The problems of one replay of kernel `k` on `inputs` (every one proven: reached by those inputs); `None`
/// when the replay could not run to the end.
pub fn replay<'a>(m: &Module<'a>, k: &kernel::Kernel<'a>, inputs: &replay::Inputs) -> Option<Vec<Problem>> {
    // the replay's questions are about numbers: a fresh budget, whatever the symbolic run spent
    solve::set_budget(budget());
    let mut e = Engine::new(m, k);
    e.seed(&inputs.tables);
    e.replay_inputs = Some(inputs.clone());
    walk(&mut e, k);
    let out = finish(e);
    if out.unknown.is_some() {
        if solve::trace() {
            eprintln!("dma-replay {} stopped: {:?}", inputs.shown, out.unknown);
        }
        return None;
    }
    Some(out.problems.into_iter().filter(|p| p.exact).collect())
}

/// Runs the kernel: its arguments bound, the grid around its body, and what is outstanding at its end.
fn walk<'a>(e: &mut Engine<'_, 'a>, k: &kernel::Kernel<'a>) {
    let m = e.m;
    let func = m.func(k.func);
    let Some(entry) = m.regions[func.body.idx()].blocks.first().copied() else {
        return;
    };
    e.seed_host(&k.host);
    let grid_n = k.iteration_bounds.len().min(func.params.len());
    for i in grid_n..func.params.len() {
        let ty = k.args.get(i).and_then(|a| a.ty.as_ref());
        let v = match ty {
            Some(t) if t.shaped().is_some() => Val::Ref(e.arg_view(i)),
            Some(crate::ir::mlir_type::MlirType::Scalar { dtype, .. }) if !dtype.is_float() => replay::scalar_arg(e, i)
                .unwrap_or_else(|| {
                    let v = e.fresh(format!("%{}", func.params.get(i).map(|p| p.name).unwrap_or("?")));
                    if let Some(Atom::Var(x)) = v.single_atom() {
                        e.scalar_args.insert(x.id, i);
                    }
                    Val::Int(v)
                }),
            _ => Val::Opaque,
        };
        e.env.insert(key(Def::BlockArg { block: entry, index: i as u32 }), v);
    }
    let bounds: Vec<Lin> = k
        .iteration_bounds
        .iter()
        .take(grid_n)
        .enumerate()
        .map(|(d, &b)| {
            if b >= 0 {
                Lin::int(b)
            } else if let Some(sum) = k.host.grid.get(&d) {
                // the host computes the size from table elements the kernel also reads: from them, not a value of
                // its own (a witness with a grid the tables do not give is no call the host makes)
                e.table_sum(sum).unwrap_or_else(|| e.fresh_carried(format!("{GRID_SIZE}{d}")))
            } else if let Some(&n) = e.replay_inputs.as_ref().and_then(|r| r.grid.get(&d)) {
                Lin::int(n)
            } else {
                // a size only known at run time: not an input the kernel author chooses freely
                e.fresh_carried(format!("{GRID_SIZE}{d}"))
            }
        })
        .collect();
    e.grid_steps = bounds.iter().try_fold(1u64, |n, b| n.checked_mul(u64::try_from(b.as_int()?).ok()?));
    grid(e, entry, &bounds, 0);
    // what is still outstanding when the kernel ends: the semaphore is not zero at exit
    let mut left = if e.unknown.is_some() { Vec::new() } else { std::mem::take(&mut e.facts) };
    // a replay blames each leftover on the last start like it (`replay::blame_last`), and counts them per op: which
    // DMA a wait took is not observable, so how many each grid step left is not either; what is, is how many
    // are left in all against how many grid steps ran
    let mut count: std::collections::HashMap<OpId, usize> = Default::default();
    if e.replay_inputs.is_some() {
        for f in &mut left {
            replay::blame_last(&e.log, f);
            *count.entry(f.op).or_default() += 1;
        }
    }
    let steps = e.grid_steps;
    for f in left {
        // (a loop's summed DMAs may add up to nothing)
        let when = Cond::and([f.guard.clone(), Cond::cmp(f.amount.clone(), term::Rel::Ne0)]);
        match e.failure_model(&when) {
            Ok(None) => {}
            Ok(Some(model)) => {
                let exact = e.exact_witness(&when, &Cond::True, &model);
                if e.replay_inputs.is_some() && replay::seen(&e.problems, f.op, "never-waited") {
                    continue;
                }
                e.problems.push(Problem {
                    op: f.op,
                    kind: "never-waited",
                    signal: f.signal,
                    amounts: (f.amount.clone(), f.amount.clone()),
                    sem: f.sem.clone(),
                    related: None,
                    when: f.guard.clone(),
                    witness: Some(model),
                    exact,
                    first: false,
                    at: f.at.clone(),
                    replayed: None,
                    left_per_step: count.get(&f.op).map(|&n| replay::per_step(n, steps)),
                    started_last: f.last,
                    region: None,
                });
            }
            Err(why) => e.giveup(f.op, format!("whether a DMA is waited: {why}")),
        }
    }
}

/// The grid from dimension `d` inwards: a loop per dimension, the kernel body innermost.
fn grid(e: &mut Engine<'_, '_>, entry: BlockId, bounds: &[Lin], d: usize) {
    if d == bounds.len() {
        e.block(entry);
        return;
    }
    let stored = e.written.clone();
    let l = induct::Loop {
        name: format!("program_id({d})"),
        op: None,
        lb: Lin::int(0),
        ub: bounds[d].clone(),
        step: 1,
        init: Vec::new(),
        deep: false,
    };
    induct::induct(e, l, &stored, &mut |e, i, _| {
        e.env.insert(key(Def::BlockArg { block: entry, index: d as u32 }), Val::Int(i.clone()));
        grid(e, entry, bounds, d + 1);
        Vec::new()
    });
}

fn finish(mut e: Engine<'_, '_>) -> Outcome {
    if solve::exhausted() {
        e.giveup(OpId(0), "the decision procedure's budget for this kernel ran out");
    }
    let decided_inside = e.unknown.is_none();
    // a DMA that outlives an iteration and is never waited at all is a finding, not a doubt
    for (op, why) in std::mem::take(&mut e.outlived) {
        if !e.problems.iter().any(|p| p.op == op && p.kind == "never-waited" && p.exact) {
            e.giveup(op, why);
        }
    }
    let names = e.bufs.iter().map(|&b| e.base_name(b)).collect();
    let dump_names = e.bufs.iter().map(|&b| e.dump_name(b)).collect();
    let only_across_iterations = decided_inside && e.unknown.is_some();
    let copied = e.dma_bases.iter().map(|&b| (b, e.base_name(b), e.dump_name(b))).collect();
    let mut refilled: std::collections::BTreeMap<OpId, Option<bool>> = Default::default();
    for (op, v) in std::mem::take(&mut e.refills) {
        let r = refilled.entry(op).or_insert(Some(false));
        *r = match (*r, v) {
            (Some(a), Some(b)) => Some(a || b),
            _ => None,
        };
    }
    let targets =
        e.m.func_ops(e.func)
            .into_iter()
            .filter(|&op| crate::semantic::op::is_dma_start(e.m.op(op).opcode))
            .filter_map(|op| {
                let t = e.m.op(op).operands.iter().find(|o| o.role == Some("target"))?;
                let entry = e.m.regions[e.m.func(e.func).body.idx()].blocks.first().copied();
                Some((op, race::root_of(e.m, entry, t.def)?))
            })
            .collect();
    let scalar_vars = e
        .scalar_args
        .iter()
        .map(|(&id, &a)| (a, Lin::var(term::Var { id, name: e.names.get(&id).cloned().unwrap_or_default().into() })))
        .collect();
    Outcome {
        copied,
        refilled,
        overlapped: std::mem::take(&mut e.overlapped),
        targets,
        problems: e.problems,
        unknown: e.unknown,
        race_unknown: e.race_unknown,
        only_across_iterations,
        steps: e.steps,
        bufs: e.bufs,
        names,
        dump_names,
        python: e.python,
        scalar_args: e.scalar_args,
        scalar_vars,
        table_dims: Default::default(),
        excluded: Vec::new(),
        assumed: Vec::new(),
    }
}

impl Outcome {
    /// Whether a problem is proven: some input reaches it, and nothing the engine could not decide changes what
    /// is outstanding where it happens.
    pub fn proven(&self, p: &Problem) -> bool {
        p.replayed.is_some() || p.exact && (self.unknown.is_none() || (p.first && self.only_across_iterations))
    }

    /// Whether a race is proven: as [`Outcome::proven`], and nothing about regions was left undecided either.
    pub fn proven_race(&self, p: &Problem) -> bool {
        p.replayed.is_some() || self.race_unknown.is_none() && self.proven(p)
    }

    /// A buffer DMAs copy, as its author names it where known.
    pub fn buffer_name(&self, b: Base) -> String {
        self.copied.iter().find(|c| c.0 == b).map_or_else(String::new, |c| c.1.clone())
    }

    /// A buffer DMAs copy, as the dump names it (a finding's identity).
    pub fn dump_buffer(&self, b: Base) -> String {
        self.copied.iter().find(|c| c.0 == b).map_or_else(String::new, |c| c.2.clone())
    }

    /// A region as the author reads it: `k_bufs[1, 0:128, 0:128]` (offsets at the witness where they are terms).
    pub fn region(&self, v: &exec::View) -> String {
        let name = self.copied.iter().find(|c| c.0 == v.base).map_or_else(|| "a buffer".to_string(), |c| c.1.clone());
        if v.map.is_none() {
            return name;
        }
        let dims: Vec<String> = v
            .offs
            .iter()
            .zip(&v.ext)
            .map(|(o, e)| match (o.as_int(), e.as_int()) {
                (_, Some(1)) => self.show(o),
                (Some(c), Some(n)) => format!("{c}:{}", c + n),
                _ => format!("{0}:{0} + {1}", self.show(o), self.show(e)),
            })
            .collect();
        format!("{name}[{}]", dims.join(", "))
    }

    /// A witness as the kernel author reads it: `program_id(0) = 1, %arg9[0] = 0`.
    pub fn witness(&self, p: &Problem) -> String {
        if let Some(shown) = &p.replayed {
            return shown.clone();
        }
        let Some(m) = &p.witness else { return String::new() };
        let val = |a: &Sym| m.get(a).copied().or(Some(0));
        let mut atoms: Vec<_> = m.iter().collect();
        atoms.sort_by_cached_key(|(a, _)| a.reading_order());
        let load = |buf: u32, idx: &[Lin]| {
            let at: Vec<String> = idx.iter().map(|i| i.eval(&val).map_or("?".to_string(), |x| x.to_string())).collect();
            format!("{}[{}]", self.names.get(buf as usize).map_or("?", String::as_str), at.join(", "))
        };
        // a table entry the kernel stores into is read at several versions: the witness names it once, as the
        // kernel started with it where that is read (else the earliest), not also each value stored over it
        let mut earliest: std::collections::HashMap<String, u32> = Default::default();
        for (a, _) in &atoms {
            if let Atom::Load { buf, idx, version } = &***a {
                let e = earliest.entry(load(*buf, idx)).or_insert(*version);
                *e = (*e).min(*version);
            }
        }
        let mut parts: Vec<String> = Vec::new();
        for (a, v) in atoms {
            let s = match &**a {
                Atom::Var(x) if !x.name.contains(':') => format!("{} = {v}", x.name),
                Atom::Load { buf, idx, version } => {
                    let name = load(*buf, idx);
                    if earliest.get(&name) != Some(version) {
                        continue;
                    }
                    format!("{name} = {v}")
                }
                _ => continue,
            };
            if !parts.contains(&s) {
                parts.push(s);
            }
        }
        parts.join(", ")
    }

    /// Where a leftover DMA was started (or a replay reached a wait): `grid step (7, 0), iteration 3 of the loop
    /// at kernels.py:185 (dump: line 46)`.
    pub fn started_at(&self, p: &Problem) -> String {
        let mut grid = Vec::new();
        let mut loops = Vec::new();
        for (n, x) in p.at.iter().rev() {
            let v = self.amount_at(p, x);
            match n.strip_prefix("program_id(") {
                Some(_) => grid.push(v),
                None => loops.push(format!("iteration {v} of {n}")),
            }
        }
        let grid = (!grid.is_empty()).then(|| format!("grid step ({})", grid.join(", ")));
        grid.into_iter().chain(loops).collect::<Vec<_>>().join(", ")
    }

    /// A semaphore slot as written: `sem[1]`, `sems[(i + 1) % 2]` (the author's names where known, else the
    /// dump's: `%arg7[1]`).
    pub fn slot(&self, k: &SemKey) -> (String, String) {
        self.slot_named(k, &self.names, true)
    }

    /// A semaphore as the dump names it, with its slot: a finding's identity, the same with or without the
    /// driver's names.
    pub fn dump_slot(&self, k: &SemKey) -> (String, String) {
        self.slot_named(k, &self.dump_names, false)
    }

    fn slot_named(&self, k: &SemKey, names: &[String], python: bool) -> (String, String) {
        let name = match self.bufs.iter().position(|b| *b == k.base) {
            Some(i) => names[i].clone(),
            None => match k.base {
                Base::Arg(i) => match self.python.get(i).cloned().flatten().filter(|_| python) {
                    Some(p) => p,
                    None => format!("%arg{i}"),
                },
                Base::Alloc(_) => "a semaphore".to_string(),
            },
        };
        let slot = k.offs.iter().map(|o| self.show(o)).collect::<Vec<_>>().join(", ");
        (name, slot)
    }

    /// A term with buffer numbers replaced by names.
    pub fn show(&self, l: &Lin) -> String {
        let mut s = l.to_string();
        for (i, n) in self.names.iter().enumerate().rev() {
            s = s.replace(&format!("buf{i}["), &format!("{n}["));
        }
        s
    }

    /// The amount at the witness: `16384 bytes`.
    pub fn amount_at(&self, p: &Problem, l: &Lin) -> String {
        let v = p.witness.as_ref().and_then(|m| l.eval(&|a: &Sym| m.get(a).copied().or(Some(0))));
        match (l.as_int(), v) {
            (Some(c), _) => c.to_string(),
            (None, Some(v)) => format!("{} (= {v} here)", self.show(l)),
            (None, None) => self.show(l),
        }
    }
}

/// The condition a witness satisfies, for tests.
pub fn holds(c: &Cond, m: &solve::Model) -> bool {
    c.eval(&|a: &Sym| m.get(a).copied().or(Some(0))).unwrap_or(false)
}
