//! Control flow: regions, loops and conditionals, the decisions that split paths and where they join again.

use super::paths::*;
use super::sample::resolve;
use super::*;

impl<'a> Sim<'_, 'a> {
    /// A region op by its kind (`scf.for`, `scf.if`, `scf.while`, `scf.index_switch`, any other: its regions once).
    pub(super) fn region_op(&mut self, id: OpId, s: State, depth: u32) -> Vec<State> {
        let m = self.m;
        let op = m.op(id);
        match op_name(op.opcode) {
            "for" => self.for_loop(id, s, depth),
            "if" => self.if_op(id, s, depth),
            "while" => self.while_loop(id, s, depth),
            "index_switch" => self.switch(id, s, depth),
            _ => {
                // any other region op (tpu.region, scf.execute_region): its regions once, in order
                let mut states = vec![s];
                for &r in &op.regions {
                    if let Some(&blk) = m.regions[r.idx()].blocks.first() {
                        states = self.run_block(blk, states, depth + 1);
                        for st in states.iter_mut() {
                            st.yielded = None;
                        }
                    }
                }
                states
            }
        }
    }

    /// Whether a region op holds a DMA or semaphore op (at any depth), or, for the trace, a buffer read, store or
    /// matmul: without one its paths can be joined.
    pub(super) fn has_dma(&mut self, id: OpId) -> bool {
        if let Some(&h) = self.dma_inside.get(&id) {
            return h;
        }
        let m = self.m;
        let mut regions: Vec<RegionId> = m.op(id).regions.to_vec();
        let mut found = false;
        while let Some(r) = regions.pop() {
            for &b in &m.regions[r.idx()].blocks {
                for &o in &m.blocks[b.idx()].ops {
                    let oc = m.op(o).opcode;
                    let effect = is_dma_start(oc) || is_dma_wait(oc) || is_semaphore_op(oc);
                    // the trace also records buffer reads, stores and matmuls
                    let traced = self.mode == Mode::Trace
                        && (is_matmul(oc) || ((is_load(oc) || is_store(oc)) && !is_scalar_access(oc)));
                    if effect || traced {
                        found = true;
                    }
                    regions.extend(m.op(o).regions.iter().copied());
                }
            }
        }
        self.dma_inside.insert(id, found);
        found
    }

    /// Paths leaving region op `id`: in `Balance` mode the values defined inside it are dead (SSA), so they are
    /// forgotten and paths that now agree on everything but the intervals of their unknowns merge (the intervals
    /// widened to their hull: more behaviours, never fewer, so a finding still needs every path).
    pub(super) fn join(&mut self, id: OpId, mut states: Vec<State>) -> Vec<State> {
        if self.mode == Mode::Trace || states.len() < 2 {
            return self.cap(states);
        }
        let locals = self.locals(id);
        for s in states.iter_mut() {
            s.env.retain(|k, _| !locals.contains(k));
        }
        let mut seen: HashMap<u64, usize> = HashMap::new();
        let mut out: Vec<State> = Vec::new();
        for s in states {
            let h = fingerprint_but_atoms(&s);
            match seen.get(&h) {
                Some(&i) if out[i].atoms.len() == s.atoms.len() => {
                    let o = &mut out[i];
                    if o.atoms != s.atoms {
                        o.vague = true;
                    } else {
                        o.vague &= s.vague;
                    }
                    for (a, b) in o.atoms.iter_mut().zip(&s.atoms) {
                        *a = (a.0.min(b.0), a.1.max(b.1));
                    }
                    o.unknown_decisions = o.unknown_decisions.min(s.unknown_decisions);
                }
                _ => {
                    seen.insert(h, out.len());
                    out.push(s);
                }
            }
        }
        self.cap(out)
    }

    /// The environment keys of values defined inside region op `id` (its nested ops' results and block arguments).
    pub(super) fn locals(&mut self, id: OpId) -> Locals {
        if let Some(l) = self.locals.get(&id) {
            return l.clone();
        }
        let m = self.m;
        let mut keys = BTreeSet::new();
        let mut regions: Vec<RegionId> = m.op(id).regions.to_vec();
        while let Some(r) = regions.pop() {
            for &b in &m.regions[r.idx()].blocks {
                for i in 0..m.blocks[b.idx()].args.len() {
                    keys.insert(dkey(Def::BlockArg { block: b, index: i as u32 }));
                }
                for &o in &m.blocks[b.idx()].ops {
                    for i in 0..(m.op(o).result_count as usize).max(1) {
                        keys.insert((0, o.0, i as u32));
                    }
                    regions.extend(m.op(o).regions.iter().copied());
                }
            }
        }
        let l = std::rc::Rc::new(keys);
        self.locals.insert(id, l.clone());
        l
    }

    /// Whether `n` paths alive inside one loop already exceed what [`Self::cap`] would keep: the exploration is
    /// then truncated and stops (paths would be dropped at the loop's exit anyway).
    pub(super) fn overflow(&mut self, n: usize) -> bool {
        if n > MAX_STATES && !self.sampling() {
            self.peak_paths = self.peak_paths.max(n);
            self.truncated = true;
            self.exhausted = true;
        }
        self.exhausted
    }

    pub(super) fn cap(&mut self, mut states: Vec<State>) -> Vec<State> {
        self.peak_paths = self.peak_paths.max(states.len());
        if states.len() <= MAX_STATES {
            return states;
        }
        // identical paths by a hash of what they hold (the environment summed per entry: its order is arbitrary)
        let mut seen: HashMap<u64, Vec<usize>> = HashMap::new();
        let mut uniq: Vec<State> = Vec::new();
        for s in states.drain(..) {
            let h = fingerprint(&s);
            let same = seen.get(&h).is_some_and(|v| v.iter().any(|&i| uniq[i] == s));
            if !same {
                seen.entry(h).or_default().push(uniq.len());
                uniq.push(s);
            }
        }
        if uniq.len() > MAX_STATES {
            self.truncated = true;
            // paths were lost: the exploration can no longer be complete, so it stops here (what it saw is still
            // judged, and sampled runs take over) instead of spending the rest of its budget
            self.exhausted = true;
            uniq.sort_by_key(|s| (s.fails.len(), s.unknown_decisions));
            uniq.truncate(MAX_STATES);
        }
        uniq
    }

    /// [`Self::decide`], counting the forks per op (`-v` names where paths multiply).
    pub(super) fn decide_at(&mut self, id: OpId, mut s: State, c: &SimValue) -> (Option<State>, Option<State>) {
        if let Some(rng) = &self.rng {
            // a sampled path takes one side: narrowed to it when the condition is symbolic, else at random (vague)
            let c = resolve(&s, c.clone());
            let side = match &c {
                SimValue::Int(x) => *x != 0,
                _ => {
                    s.unknown_decisions += 1;
                    match self.choose(&mut s, &c) {
                        Some(b) => b,
                        None => {
                            s.vague = true;
                            rng.coin()
                        }
                    }
                }
            };
            return if side { (Some(s), None) } else { (None, Some(s)) };
        }
        let r = self.decide(s, c);
        if r.0.is_some() && r.1.is_some() {
            *self.forks.entry(id).or_default() += 1;
        }
        r
    }

    /// Decides a condition on a state: the states where it holds and those where it does not.
    pub(super) fn decide(&self, mut s: State, c: &SimValue) -> (Option<State>, Option<State>) {
        match c {
            SimValue::Int(x) => {
                if *x != 0 {
                    (Some(s), None)
                } else {
                    (None, Some(s))
                }
            }
            SimValue::Cond { atom, lo, hi, neg } => {
                let Some(&(alo, ahi)) = s.atoms.get(*atom as usize) else { return (Some(s.clone()), Some(s)) };
                let inside = (alo.max(*lo), ahi.min(*hi));
                let all_in = alo >= *lo && ahi <= *hi;
                let none_in = inside.0 > inside.1;
                let (t_in, t_out) = if *neg { (false, true) } else { (true, false) };
                let _ = t_out;
                if all_in {
                    return if t_in { (Some(s), None) } else { (None, Some(s)) };
                }
                if none_in {
                    return if t_in { (None, Some(s)) } else { (Some(s), None) };
                }
                let mut a = s.clone();
                a.atoms[*atom as usize] = inside;
                // outside: representable when [lo, hi] covers one end
                if *lo <= alo {
                    s.atoms[*atom as usize] = (hi.saturating_add(1), ahi);
                } else if *hi >= ahi {
                    s.atoms[*atom as usize] = (alo, lo.saturating_sub(1));
                }
                a.unknown_decisions += 1;
                s.unknown_decisions += 1;
                if *neg {
                    (Some(s), Some(a))
                } else {
                    (Some(a), Some(s))
                }
            }
            // a conjunction: its true side narrows by every part in turn; its false side (some part false) keeps
            // the path as it is (more behaviours, never fewer)
            SimValue::All(parts) | SimValue::AnyOf(parts) => {
                let all = matches!(c, SimValue::All(_));
                let mut cur = Some(s.clone());
                let mut decided = true;
                for p in parts {
                    let Some(st) = cur.take() else { break };
                    let (t, f) = self.decide(st, p);
                    let (keep, other) = if all { (t, f) } else { (f, t) };
                    decided &= other.is_none();
                    cur = keep;
                }
                let rest = if cur.is_some() && decided {
                    None
                } else {
                    s.unknown_decisions += 1;
                    s.vague = true;
                    Some(s)
                };
                if all {
                    (cur, rest)
                } else {
                    (rest, cur)
                }
            }
            _ => {
                s.vague = true;
                let mut t = s.clone();
                t.unknown_decisions += 1;
                s.unknown_decisions += 1;
                (Some(t), Some(s))
            }
        }
    }

    pub(super) fn for_loop(&mut self, id: OpId, s: State, depth: u32) -> Vec<State> {
        let m = self.m;
        let op = m.op(id);
        let Some(&body) = op.regions.first().and_then(|r| m.regions[r.idx()].blocks.first()) else { return vec![s] };
        let mut s = s;
        let LoopHeader { lb, ub, step, init_vals } = self.loop_header(id, &mut s);
        // iterations: a list of induction values, or `None` for a dynamic bound
        let (plan, sampled) = iteration_plan(&lb, &ub, step);
        let mut done: Vec<State> = Vec::new();
        let mut live: Vec<(State, Vec<SimValue>)> = vec![(s, init_vals)];
        // induction values: known, or `lb + k * step` of an unknown lower bound (comparable with the upper bound
        // when both derive from the same unknown: `for i = n to n` runs no iteration)
        let iters: Vec<SimValue> = match &plan {
            Some(p) => p.iter().map(|&x| SimValue::Int(x)).collect(),
            None => {
                (0..DYN_ITERS).map(|k| self.add_scaled(lb.clone(), SimValue::Int(k.saturating_mul(step)), 1)).collect()
            }
        };
        for (k, iv) in iters.into_iter().enumerate() {
            if live.is_empty() || self.exhausted || self.overflow(live.len() + done.len()) {
                break;
            }
            let entering = if plan.is_some() {
                std::mem::take(&mut live)
            } else {
                self.enter_dynamic_iteration(id, &mut live, &mut done, &iv, &ub)
            };
            live = self.run_iteration(id, body, entering, (k, &iv), depth);
        }
        // still iterating after the last simulated iteration of a dynamic loop, or iterations skipped: cut short
        let cut = plan.is_none() || sampled;
        for (mut st, carried) in live {
            st.vague |= cut;
            self.finish_loop(id, &mut st, &carried);
            done.push(st);
        }
        self.join(id, done)
    }

    /// The bounds, step and initial carried values of `scf.for` `id` (on a sampled path its bounds pinned, so the
    /// loop has one known length); an unknown or non-positive step is taken as 1.
    fn loop_header(&mut self, id: OpId, s: &mut State) -> LoopHeader {
        let op = self.m.op(id);
        let lb_o = op.operands.iter().find(|o| o.role.is_none());
        let ub_o = op.operands.iter().find(|o| o.role == Some("to")).or_else(|| op.operands.get(1));
        let st_o = op.operands.iter().find(|o| o.role == Some("step")).or_else(|| op.operands.get(2));
        let inits: Vec<&Operand<'_>> = op
            .operands
            .iter()
            .filter(|o| matches!(o.role, Some("iter_args") | Some("init") | Some("iter_arg")))
            .collect();
        let inits: Vec<&Operand<'_>> = if inits.is_empty() { op.operands.iter().skip(3).collect() } else { inits };
        let mut lb = lb_o.map(|o| self.get(s, o)).unwrap_or(SimValue::Unknown);
        let mut ub = ub_o.map(|o| self.get(s, o)).unwrap_or(SimValue::Unknown);
        if self.sampling() {
            for b in [&mut lb, &mut ub] {
                if let Some(x) = self.pin(s, b, None) {
                    *b = SimValue::Int(x);
                }
            }
        }
        let step = match st_o.map(|o| self.get(s, o)) {
            Some(SimValue::Int(x)) if x > 0 => x,
            _ => 1,
        };
        let init_vals: Vec<SimValue> = inits.iter().map(|o| self.get(s, o)).collect();
        LoopHeader { lb, ub, step, init_vals }
    }

    /// A dynamic bound: each live state decides `iv < ub`; the states that leave the loop are finished into
    /// `done`, the ones that enter are returned.
    fn enter_dynamic_iteration(
        &mut self,
        id: OpId,
        live: &mut Vec<(State, Vec<SimValue>)>,
        done: &mut Vec<State>,
        iv: &SimValue,
        ub: &SimValue,
    ) -> Vec<(State, Vec<SimValue>)> {
        let mut entering = Vec::new();
        for (st, carried) in live.drain(..) {
            let c = self.compare("slt", iv.clone(), ub.clone());
            let (t, f) = self.decide_at(id, st, &c);
            if let Some(mut f) = f {
                self.finish_loop(id, &mut f, &carried);
                done.push(f);
            }
            if let Some(t) = t {
                entering.push((t, carried));
            }
        }
        entering
    }

    /// Runs iteration `k` (induction value `iv`) of the loop body on the entering states; the states after it,
    /// each with the values it yields.
    fn run_iteration(
        &mut self,
        id: OpId,
        body: BlockId,
        entering: Vec<(State, Vec<SimValue>)>,
        (k, iv): (usize, &SimValue),
        depth: u32,
    ) -> Vec<(State, Vec<SimValue>)> {
        let mut states = Vec::new();
        for (mut st, carried) in entering {
            st.env.insert(dkey(Def::BlockArg { block: body, index: 0 }), iv.clone());
            for (k, v) in carried.into_iter().enumerate() {
                st.env.insert(dkey(Def::BlockArg { block: body, index: k as u32 + 1 }), v);
            }
            st.ctx.push((id, if let SimValue::Int(i) = iv { *i } else { k as i64 }));
            states.push(st);
        }
        let out = self.run_block(body, states, depth + 1);
        out.into_iter()
            .map(|mut st| {
                st.ctx.pop();
                let y = st.yielded.take().unwrap_or_default();
                (st, y)
            })
            .collect()
    }

    pub(super) fn finish_loop(&self, id: OpId, s: &mut State, carried: &[SimValue]) {
        for (k, v) in carried.iter().enumerate() {
            self.set(s, id, k as u32, v.clone());
        }
    }

    pub(super) fn if_op(&mut self, id: OpId, s: State, depth: u32) -> Vec<State> {
        let m = self.m;
        let op = m.op(id);
        let c = op.operands.first().map(|o| self.get(&s, o)).unwrap_or(SimValue::Unknown);
        let (t, f) = self.decide_at(id, s, &c);
        // nothing DMA (or traced) inside: the paths of each branch are one (the branch's own decision still splits,
        // keeping what it narrowed: `(k + 1) * 256 < len` picks which next block a path computes)
        let pure = !self.has_dma(id);
        let mut out = Vec::new();
        for (st, r) in [(t, 0usize), (f, 1usize)] {
            let Some(st) = st else { continue };
            out.extend(self.branch(id, r, st, depth, pure));
        }
        self.join(id, out)
    }

    /// Region `r` of a conditional op `id` run from `s`, its yielded values set as the op's results; with `join`,
    /// the paths it split into are first joined into one (their own values forgotten).
    fn branch(&mut self, id: OpId, r: usize, s: State, depth: u32, join: bool) -> Vec<State> {
        let m = self.m;
        let blk = m.op(id).regions.get(r).and_then(|r| m.regions[r.idx()].blocks.first().copied());
        let mut res = match blk {
            Some(b) => self.run_block(b, vec![s], depth + 1),
            None => vec![s],
        };
        if join && res.len() > 1 {
            let locals = self.locals(id);
            for st in res.iter_mut() {
                st.env.retain(|k, _| !locals.contains(k));
            }
            res = join_values(res).into_iter().collect();
        }
        for st in res.iter_mut() {
            let y = st.yielded.take().unwrap_or_default();
            self.finish_loop(id, st, &y);
        }
        res
    }

    pub(super) fn switch(&mut self, id: OpId, s: State, depth: u32) -> Vec<State> {
        let m = self.m;
        let op = m.op(id);
        let mut s = s;
        let mut c = op.operands.first().map(|o| self.get(&s, o)).unwrap_or(SimValue::Unknown);
        if let Some(x) = self.pin(&mut s, &c, None) {
            c = SimValue::Int(x); // a sampled path takes one case
        }
        let cases = op.attr("cases").and_then(mattr::int_array).unwrap_or_default();
        // regions: default first, then one per case (MLIR's order)
        let pick: Vec<usize> = match c {
            SimValue::Int(x) => vec![cases.iter().position(|&k| k == x).map(|p| p + 1).unwrap_or(0)],
            _ => (0..op.regions.len()).collect(),
        };
        let mut out = Vec::new();
        for r in pick {
            let mut st = s.clone();
            if op.regions.len() > 1 && !matches!(c, SimValue::Int(_)) {
                st.unknown_decisions += 1;
                st.vague = true;
            }
            out.extend(self.branch(id, r, st, depth, false));
        }
        self.join(id, out)
    }

    pub(super) fn while_loop(&mut self, id: OpId, s: State, depth: u32) -> Vec<State> {
        let m = self.m;
        let op = m.op(id);
        let blk = |r: usize| op.regions.get(r).and_then(|r| m.regions[r.idx()].blocks.first().copied());
        let (Some(before), after) = (blk(0), blk(1)) else { return vec![s] };
        let init: Vec<SimValue> = op.operands.iter().map(|o| self.get(&s, o)).collect();
        let mut live = vec![(s, init)];
        let mut done = Vec::new();
        let cap = if self.sampling() { super::sample::SAMPLE_ITERS } else { DYN_ITERS };
        for k in 0..=cap {
            if live.is_empty() || self.exhausted || self.overflow(live.len() + done.len()) {
                break;
            }
            let mut states = Vec::new();
            for (mut st, args) in live.drain(..) {
                for (i, v) in args.into_iter().enumerate() {
                    st.env.insert(dkey(Def::BlockArg { block: before, index: i as u32 }), v);
                }
                states.push(st);
            }
            for mut st in self.run_block(before, states, depth + 1) {
                let y = st.yielded.take().unwrap_or_default();
                let c = y.first().cloned().unwrap_or(SimValue::Unknown);
                let rest: Vec<SimValue> = y.into_iter().skip(1).collect();
                let (t, f) = self.decide_at(id, st, &c);
                if let Some(mut f) = f {
                    self.finish_loop(id, &mut f, &rest);
                    done.push(f);
                }
                if let (Some(mut t), Some(after)) = (t, after) {
                    if k == cap {
                        t.vague = true;
                        self.finish_loop(id, &mut t, &rest);
                        done.push(t);
                        continue;
                    }
                    for (i, v) in rest.iter().enumerate() {
                        t.env.insert(dkey(Def::BlockArg { block: after, index: i as u32 }), v.clone());
                    }
                    t.ctx.push((id, k));
                    for mut a in self.run_block(after, vec![t], depth + 1) {
                        a.ctx.pop();
                        let y = a.yielded.take().unwrap_or_default();
                        live.push((a, y));
                    }
                }
            }
        }
        for (mut st, args) in live {
            self.finish_loop(id, &mut st, &args);
            done.push(st);
        }
        self.join(id, done)
    }
}

/// What an `scf.for` starts with: its bounds, step and initial carried values.
struct LoopHeader {
    lb: SimValue,
    ub: SimValue,
    step: i64,
    init_vals: Vec<SimValue>,
}

/// The induction values of a loop with known bounds (sampled when it is long: the flag says iterations were
/// skipped), or `None` for a dynamic bound.
fn iteration_plan(lb: &SimValue, ub: &SimValue, step: i64) -> (Option<Vec<i64>>, bool) {
    match (lb, ub) {
        (SimValue::Int(l), SimValue::Int(u)) => {
            let n = if u > l { u.saturating_sub(*l).saturating_add(step - 1) / step } else { 0 };
            let ks = sample(n, FULL_LOOP);
            let sampled = (ks.len() as i64) < n;
            (Some(ks.into_iter().map(|k| l.saturating_add(k.saturating_mul(step))).collect()), sampled)
        }
        _ => (None, false),
    }
}
