//! Which failures are proven: a witness names inputs only (or inputs that fix the rest), with every loop index
//! at its first value where that is enough.

use super::exec::Engine;
use super::solve::{self, Answer, Model};
use super::term::{Atom, Cond, Lin, Rel, Sym};

impl Engine<'_, '_> {
    /// Every table element `c` reads at an index of inputs lies inside its kernel argument's static shape. A read
    /// past the end of an SMEM table is undefined (Mosaic does not check it), so a witness may not rest on one.
    pub fn in_bounds(&self, c: &Cond) -> Cond {
        let mut atoms = Vec::new();
        c.atoms(&mut atoms);
        let mut out = Vec::new();
        for a in &atoms {
            let Atom::Load { buf, idx, .. } = &**a else { continue };
            let Some(&super::exec::Base::Arg(i)) = self.bufs.get(*buf as usize) else { continue };
            let Some(dims) = self.arg_dims(i) else { continue };
            // (only reads at indices of inputs: a witness names those; an index of carried values is the
            // induction's abstract state, which this would narrow)
            if dims.len() != idx.len() || !self.is_fixed_input(a) {
                continue;
            }
            for (x, &d) in idx.iter().zip(&dims) {
                if x.as_int().is_some_and(|x| (0..d).contains(&x)) {
                    continue;
                }
                out.push(Cond::compare("sge", x, &Lin::int(0)).unwrap_or(Cond::True));
                out.push(Cond::compare("slt", x, &Lin::int(d)).unwrap_or(Cond::True));
            }
        }
        Cond::and(out)
    }

    /// Every table element `c` reads at an index of inputs is at least zero: what the tables of production
    /// kernels hold (lengths, offsets, page numbers, counts). Only a preference for witnesses — a failure that
    /// needs a negative entry is still one — since a witness with a negative offset makes the kernel's DMAs read
    /// before their buffers, which stops a real run (and jax's interpreter) before the failure it shows.
    fn plausible(&self, c: &Cond) -> Cond {
        at_least_zero(c, |a| matches!(&**a, Atom::Load { .. }) && self.is_fixed_input(a))
    }

    /// A model of the failure condition `when` whose table reads are all in bounds (`in_bounds`), and where one
    /// exists, whose table entries are all non-negative (`plausible`). `Err` with the reason where there is none:
    /// the failure needs a read past a table's end, or the question is undecided.
    pub fn failure_model(&self, when: &Cond) -> Result<Option<Model>, NoWitness> {
        let bounds = self.in_bounds(when);
        // the solver's first model stands where it is in bounds and plausible (asking again would move it for
        // nothing)
        let first = match solve::check(when) {
            Answer::Unsat => return Ok(None),
            Answer::Unknown(why) => return Err(NoWitness::Undecided(why)),
            Answer::Sat(m) => m,
        };
        let preferred = Cond::and([bounds.clone(), self.plausible(when)]);
        if preferred.eval(&|a| Some(first.get(a).copied().unwrap_or(0))) == Some(true) {
            return Ok(Some(first));
        }
        if let Answer::Sat(m) = solve::check(&Cond::and([when.clone(), preferred])) {
            return Ok(Some(m));
        }
        if bounds.eval(&|a| Some(first.get(a).copied().unwrap_or(0))) == Some(true) {
            return Ok(Some(first));
        }
        if solve::trace() {
            eprintln!("dma-bounds the model reads past a table: {bounds}");
            for (k, v) in &first {
                eprintln!("dma-bounds   {k} = {v}");
            }
        }
        let bounded = Cond::and([when.clone(), bounds]);
        match solve::check(&bounded) {
            Answer::Sat(m) => Ok(Some(m)),
            Answer::Unsat => Err(NoWitness::PastTable),
            Answer::Unknown(why) => Err(NoWitness::Undecided(why)),
        }
    }

    /// A witness of `when` with every loop index it names at its first value, when there is one (else `model`).
    pub fn first_iterations(&self, when: &Cond, model: Model) -> (Model, bool) {
        let mut firsts = Vec::new();
        for a in model.keys() {
            if let Atom::Var(v) = &**a {
                if let Some(lb) = self.first_value.get(&v.id) {
                    firsts.push(Cond::cmp(Lin::atom((**a).clone()).sub(lb).unwrap_or_default(), Rel::Eq0));
                }
            }
        }
        if firsts.is_empty() {
            return (model, true);
        }
        // (the witness with loop indices at their first values is asked anew: its reads must be in bounds too,
        // and its table entries non-negative where they can be)
        let bounded = Cond::and([when.clone(), self.in_bounds(when)].into_iter().chain(firsts));
        if let Answer::Sat(m) = solve::check(&Cond::and([bounded.clone(), self.plausible(when)])) {
            return (m, true);
        }
        match solve::check(&bounded) {
            Answer::Sat(m) => (m, true),
            _ => (model, false),
        }
    }

    /// Whether a witness's values are all inputs: grid and loop indices (their ranges are in the condition) and
    /// loads of buffers the kernel never writes.
    pub fn is_input_model(&self, m: &Model) -> bool {
        m.keys().all(|a| self.is_input(a))
    }

    /// Whether a witness of `when` is all inputs: the model's values, and every atom `when` reads (a solver's
    /// model may leave out values it eliminated, a loop's result among them).
    pub fn is_input_witness(&self, when: &Cond, m: &Model) -> bool {
        let mut atoms = Vec::new();
        when.atoms(&mut atoms);
        self.is_input_model(m) && atoms.iter().all(|a| self.is_input(a))
    }

    /// Whether the model's inputs reach the failure `when` whatever the rest is: all inputs, or the inputs fixed
    /// to the model's values leave no state that `assume` allows and `when` excludes (a slot read back from SMEM
    /// is not an input, but what the previous iteration stored there is fixed by the inputs).
    pub fn exact_witness(&self, when: &Cond, assume: &Cond, m: &Model) -> bool {
        // after a deep invariant, what is outstanding is only known up to which block a wait takes (`deep`)
        if self.deep_used {
            return false;
        }
        let both = Cond::and([when.clone(), assume.clone()]);
        if self.is_input_witness(&both, m) {
            return true;
        }
        let mut atoms = Vec::new();
        both.atoms(&mut atoms);
        let fixed: Vec<Cond> = atoms
            .iter()
            .filter(|a| self.is_fixed_input(a))
            .filter_map(|a| {
                let v = m.get(a).copied().unwrap_or(0);
                Some(Cond::cmp(Lin::atom((**a).clone()).sub(&Lin::int(v))?, Rel::Eq0))
            })
            .collect();
        let rest = Cond::and(fixed.into_iter().chain([assume.clone(), Cond::negate(when.clone())]).collect::<Vec<_>>());
        solve::check(&rest).is_unsat()
    }

    /// An input whose value a witness gives: a kernel argument or a table element at an index of inputs.
    fn is_fixed_input(&self, a: &Sym) -> bool {
        match &**a {
            Atom::Var(_) => self.is_input(a),
            Atom::Load { idx, .. } => {
                let mut inner = Vec::new();
                idx.iter().for_each(|l| l.atoms(&mut inner));
                self.is_input(a) && inner.iter().all(|x| self.is_input(x))
            }
            _ => false,
        }
    }

    fn is_input(&self, a: &Sym) -> bool {
        match &**a {
            Atom::Var(v) => {
                !self.carried.contains(&v.id)
                    && !self.names.get(&v.id).is_some_and(|n| n.ends_with("?]") || n.ends_with("..]"))
            }
            Atom::Load { buf, .. } => self.bufs.get(*buf as usize).is_some_and(|b| !self.written.contains(b)),
            Atom::Div { .. } | Atom::Rem { .. } | Atom::Min(..) | Atom::Max(..) | Atom::Select(..) => true,
            Atom::Mul(..) | Atom::App(..) => false,
        }
    }
}

/// Why a failure condition that may hold has no witness to show.
pub enum NoWitness {
    /// The decision procedure did not decide (its reason).
    Undecided(&'static str),
    /// Only table reads past a table's end reach it.
    PastTable,
}

impl NoWitness {
    /// The reason, for a failure the message calls `what` (`a failure`, `a race`).
    pub fn of(&self, what: &str) -> String {
        match self {
            NoWitness::Undecided(why) => format!("undecided ({why})"),
            NoWitness::PastTable => format!("{what} needs a table read past its end (undefined: no input shows it)"),
        }
    }
}

impl std::fmt::Display for NoWitness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.of("a failure"))
    }
}

/// `a ≥ 0` for every atom `a` of `c` that `table_read` picks: the preference for non-negative tables that the
/// engine's witnesses (`Engine::plausible`) and those the assumptions allow (`under.rs`) share.
pub(super) fn at_least_zero(c: &Cond, table_read: impl Fn(&Sym) -> bool) -> Cond {
    let mut atoms = Vec::new();
    c.atoms(&mut atoms);
    let reads = atoms.iter().filter(|a| table_read(a));
    Cond::and(reads.map(|a| Cond::cmp(Lin::atom((**a).clone()), Rel::Ge0)).collect::<Vec<_>>())
}
