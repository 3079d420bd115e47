//! DMA starts, semaphore signals and waits: what each adds to and takes from its semaphore (bytes or units).

use super::*;

impl<'a> Sim<'_, 'a> {
    /// The semaphore refs of a DMA op: by role, else (LLO) every operand that is a view of a semaphore.
    pub(super) fn sem_operands(&self, s: &State, op: &Op<'a>, roles: &[&str]) -> Vec<RefV> {
        let by_role: Vec<RefV> = op
            .operands
            .iter()
            .filter(|o| o.role.is_some_and(|r| roles.contains(&r)))
            .filter_map(|o| match self.get(s, o) {
                SimValue::Ref(r) => Some(r),
                _ => None,
            })
            .collect();
        if !by_role.is_empty() || op.operands.iter().any(|o| o.role.is_some()) {
            return by_role;
        }
        op.operands
            .iter()
            .filter_map(|o| match self.get(s, o) {
                SimValue::Ref(r) if self.is_sem_base(r.base) => Some(r),
                _ => None,
            })
            .collect()
    }

    pub(super) fn is_sem_base(&self, b: Base) -> bool {
        match b {
            Base::Arg(i) => self.sem_args.contains(&i),
            Base::Alloc(op) => self.m.op(op).ty.mlir().is_some_and(|t| t.is_semaphore()),
        }
    }

    pub(super) fn size_of(op: &Op<'_>, roles: &[&str]) -> Option<String> {
        for r in roles {
            if let Some(o) = op.operands.iter().find(|o| o.role == Some(*r)) {
                if let Some(sh) = o.ty.as_ref().and_then(|t| t.mlir()).and_then(|t| t.shaped()) {
                    let dims = sh.static_dims()?;
                    let dt = sh.elem.to_string();
                    return Some(dims.iter().map(|d| format!("{d}x")).collect::<String>() + &dt);
                }
            }
        }
        None
    }

    pub(super) fn start(&mut self, id: OpId, s: &mut State) {
        let op = self.m.op(id);
        s.executed.insert(id);
        let plain = !crate::semantic::op::is_indirect_dma(op.opcode);
        let mut sems = self.sem_operands(s, op, &[if plain { "target_semaphore" } else { "semaphore" }]);
        if op.operands.iter().any(|o| o.role == Some("source_semaphore")) {
            sems.extend(self.sem_operands(s, op, &["source_semaphore"]));
        }
        if sems.is_empty() {
            self.unaccountable.get_or_insert(id);
            return;
        }
        let target = op.operands.iter().find(|o| o.role == Some("target")).and_then(|o| match self.get(s, o) {
            SimValue::Ref(r) => Some(r),
            _ => None,
        });
        let keys: Vec<SemSlot> =
            sems.iter().map(|r| SemSlot { base: r.base, offs: r.offs.clone(), bytes: r.bytes }).collect();
        // an indirect DMA (a gather or scatter) moves the rows of its on-chip end
        let ends: &[&str] = match crate::semantic::op::indirect_dma_rows_role(op) {
            Some(r) => &[r],
            None if plain => &["target", "source"],
            None => &[],
        };
        let bytes = bytes_of(op, ends);
        let d = Dma {
            op: id,
            left: vec![bytes.unwrap_or(1); keys.len()],
            bytes,
            signal: false,
            remote: op.operands.iter().any(|o| o.role == Some("device_id")),
            sems: keys,
            target,
            size: Self::size_of(op, &["target", "source"]),
            when: self.when(s),
            started: s.trace.len(),
            step: self.step_index,
            waited: None,
        };
        self.push_dma(s, d);
    }

    pub(super) fn push_dma(&mut self, s: &mut State, d: Dma) {
        s.dmas.push(d);
        if self.mode == Mode::Trace && s.trace.len() < MAX_TRACE {
            s.trace.push(Event::Start { dma: s.dmas.len() - 1 });
        }
    }

    /// The semaphore and the amount of `tpu.sem_signal %sem, %amount` / `tpu.sem_wait %sem, %amount`.
    pub(super) fn sem_and_amount(&self, s: &State, op: &Op<'a>) -> (Option<RefV>, SimValue) {
        let plain: Vec<&Operand<'_>> = op
            .operands
            .iter()
            .filter(|o| o.role.is_none() || matches!(o.role, Some("semaphore") | Some("amount") | Some("value")))
            .collect();
        let sem = plain.iter().find_map(|o| match self.get(s, o) {
            SimValue::Ref(r) => Some(r),
            _ => None,
        });
        let amount =
            plain.iter().map(|o| self.get(s, o)).find(|v| !matches!(v, SimValue::Ref(_))).unwrap_or(SimValue::Unknown);
        (sem, amount)
    }

    /// `tpu.sem_signal`: adds `amount` units to a (regular or barrier) semaphore, locally or on another device.
    pub(super) fn signal(&mut self, id: OpId, s: &mut State) {
        let op = self.m.op(id);
        s.executed.insert(id);
        let (Some(sem), amount) = self.sem_and_amount(s, op) else {
            self.unaccountable.get_or_insert(id);
            return;
        };
        let Some(n) = (match amount {
            SimValue::Int(n) if n > 0 => u64::try_from(n).ok(),
            _ => None,
        }) else {
            self.unknown_amount.get_or_insert(id);
            return;
        };
        let d = Dma {
            op: id,
            left: vec![n],
            bytes: Some(n),
            signal: true,
            remote: op.operands.iter().any(|o| o.role == Some("device_id")),
            sems: vec![SemSlot { base: sem.base, offs: sem.offs.clone(), bytes: sem.bytes }],
            target: None,
            size: None,
            when: self.when(s),
            started: s.trace.len(),
            step: self.step_index,
            waited: None,
        };
        self.push_dma(s, d);
    }

    /// A DMA wait (`tpu.wait_dma2`: the byte size of its descriptor) or a semaphore wait (`tpu.sem_wait`: a count).
    pub(super) fn wait(&mut self, id: OpId, s: &mut State) {
        s.executed.insert(id);
        let sem_wait = is_semaphore_wait(self.m.op(id).opcode);
        let Some((sem, need)) = self.wait_semaphore_and_need(id, s, sem_wait) else { return };
        let key = SemSlot { base: sem.base, offs: sem.offs.clone(), bytes: sem.bytes };
        let cands = self.outstanding_on(id, s, &key);
        // a slot only known as "some slot of this semaphore array" makes the accounting a guess from here on
        let definite = |k: &SemSlot| *k == key && k.offs.iter().all(Option::is_some);
        if !key.offs.iter().all(Option::is_some) || cands.iter().any(|&(i, k)| !definite(&s.dmas[i].sems[k])) {
            s.vague = true;
        }
        let (sem_name, slot) = self.describe_key(&key);
        let semtxt = if slot.is_empty() { sem_name.clone() } else { format!("{sem_name}[{slot}]") };
        // a size-less transfer on either side: one wait takes one transfer
        let need = match need {
            Need::Units(n) if cands.iter().all(|&(i, _)| s.dmas[i].bytes.is_some()) => Need::Units(n),
            _ => Need::OneTransfer,
        };
        let (fail, consumed) = self.take_outstanding(s, &cands, need, &semtxt, sem_wait);
        if let Some(detail) = fail {
            let kind = if cands.is_empty() { "wait-without-start" } else { "wait-exceeds-signals" };
            let related = cands.first().map(|&(i, _)| s.dmas[i].op);
            // a path fails on a wait that failed at least once on it
            let exact = !s.vague;
            s.fails.entry(id).or_insert(PathProblem { exact, kind, detail, semaphore: sem_name, slot, related });
        }
        self.record_wait(id, s, &consumed);
    }

    /// The semaphore a wait waits on and what it takes from it; `None` (the wait noted as unknown or
    /// unaccountable) when either is not known.
    fn wait_semaphore_and_need(&mut self, id: OpId, s: &State, sem_wait: bool) -> Option<(RefV, Need)> {
        let op = self.m.op(id);
        let (sem, need) = if sem_wait {
            let (sem, amount) = self.sem_and_amount(s, op);
            match amount {
                SimValue::Int(n) if n > 0 => (sem, Need::Units(n as u64)),
                _ => {
                    self.unknown_amount.get_or_insert(id);
                    return None;
                }
            }
        } else {
            let sem = self.sem_operands(s, op, &["semaphore", "sem"]).into_iter().next();
            let ends: &[&str] = match crate::semantic::op::indirect_dma_rows_role(op) {
                Some(r) => &[r],
                None => &["src", "dst", "ref"],
            };
            (sem, bytes_of(op, ends).map(Need::Units).unwrap_or(Need::OneTransfer))
        };
        let Some(sem) = sem else {
            self.unaccountable.get_or_insert(id);
            return None;
        };
        Some((sem, need))
    }

    /// The outstanding transfers (or signals) on the wait's semaphore slot `key`, as (dma, semaphore) indices in
    /// the order the wait takes them. Which of them a wait "takes" is only blame (the semaphore is a sum): the
    /// same target first, then the most recent (the one a pipelined wait is written for), so a stale transfer left
    /// by a previous iteration is the one still outstanding at the end.
    fn outstanding_on(&self, id: OpId, s: &State, key: &SemSlot) -> Vec<(usize, usize)> {
        let op = self.m.op(id);
        let dst = op.operands.iter().find(|o| o.role == Some("dst") || o.role == Some("ref")).and_then(|o| match self
            .get(s, o)
        {
            SimValue::Ref(r) => Some(r),
            _ => None,
        });
        let may_eq = |a: &SemSlot, b: &SemSlot| {
            a.base == b.base
                && a.bytes == b.bytes
                && a.offs.len() == b.offs.len()
                && a.offs.iter().zip(&b.offs).all(|(x, y)| x.is_none() || y.is_none() || x == y)
        };
        let same_target = |d: &Dma| match (&d.target, &dst) {
            (Some(a), Some(b)) => a.base == b.base && a.offs == b.offs,
            _ => false,
        };
        let mut cands: Vec<(usize, usize)> = s
            .dmas
            .iter()
            .enumerate()
            .flat_map(|(i, d)| {
                d.sems.iter().enumerate().filter(|(k, sk)| d.left[*k] > 0 && may_eq(sk, key)).map(move |(k, _)| (i, k))
            })
            .collect();
        cands.sort_by_key(|&(i, _)| (!same_target(&s.dmas[i]), std::cmp::Reverse(i)));
        cands
    }

    /// Takes what the wait needs from the candidates in order; the failure (nothing or too little outstanding)
    /// and the transfers it took from.
    fn take_outstanding(
        &self,
        s: &mut State,
        cands: &[(usize, usize)],
        need: Need,
        semtxt: &str,
        sem_wait: bool,
    ) -> (Option<String>, Vec<usize>) {
        let mut consumed: Vec<usize> = Vec::new();
        let fail = match need {
            Need::OneTransfer => match cands.first() {
                Some(&(i, k)) => {
                    s.dmas[i].left[k] = 0;
                    consumed.push(i);
                    None
                }
                None => Some(self.nothing_outstanding(s, semtxt)),
            },
            Need::Units(mut n) => {
                let total: u64 = cands.iter().map(|&(i, k)| s.dmas[i].left[k]).fold(0, u64::saturating_add);
                let fail = match total {
                    0 => Some(self.nothing_outstanding(s, semtxt)),
                    t if t < n => Some(format!(
                        "this wait {} on {semtxt} takes {} but only {} {} outstanding on that semaphore: it blocks forever",
                        self.when(s),
                        amount_text(n, sem_wait),
                        amount_text(t, sem_wait),
                        if t == 1 { "is" } else { "are" },
                    )),
                    _ => None,
                };
                for &(i, k) in cands {
                    if n == 0 {
                        break;
                    }
                    let take = s.dmas[i].left[k].min(n);
                    s.dmas[i].left[k] -= take;
                    n -= take;
                    consumed.push(i);
                }
                fail
            }
        };
        (fail, consumed)
    }

    /// Marks the transfers the wait completed as waited, then records the wait (trace) or drops them (balance).
    fn record_wait(&self, id: OpId, s: &mut State, consumed: &[usize]) {
        let waited = s.trace.len();
        for &i in consumed {
            if s.dmas[i].left.iter().all(|&l| l == 0) {
                s.dmas[i].waited = Some(waited);
            }
        }
        if self.mode == Mode::Trace {
            if s.trace.len() < MAX_TRACE {
                s.trace.push(Event::Wait { op: id, dma: consumed.first().copied() });
            }
        } else {
            // balance: a consumed transfer is history
            s.dmas.retain(|d| d.left.iter().any(|&l| l > 0));
        }
    }

    pub(super) fn nothing_outstanding(&self, s: &State, semtxt: &str) -> String {
        let when = self.when(s);
        let others: BTreeSet<String> = s
            .dmas
            .iter()
            .flat_map(|d| d.sems.iter().zip(&d.left).filter(|(_, &l)| l > 0).map(|(k, _)| k))
            .map(|k| {
                let (n, sl) = self.describe_key(k);
                if sl.is_empty() {
                    n
                } else {
                    format!("{n}[{sl}]")
                }
            })
            .collect();
        if others.is_empty() {
            format!("this wait {when} on {semtxt} has no DMA outstanding (nothing started on any semaphore is pending)")
        } else {
            format!(
                "this wait {when} on {semtxt} has no DMA outstanding on that semaphore; outstanding: {}",
                others.into_iter().collect::<Vec<_>>().join(", ")
            )
        }
    }
}

/// What a wait takes from its semaphore.
#[derive(Clone, Copy)]
pub(super) enum Need {
    /// Bytes (a DMA wait's descriptor) or units (`tpu.sem_wait`).
    Units(u64),
    /// One whole transfer: the size is not known on one side.
    OneTransfer,
}

pub(super) fn amount_text(n: u64, units: bool) -> String {
    if units {
        format!("{n} unit(s)")
    } else {
        format!("{n} bytes")
    }
}

/// The byte size of the first operand with one of `roles` that has a static shaped type.
pub(super) fn bytes_of(op: &Op<'_>, roles: &[&str]) -> Option<u64> {
    let o = roles.iter().find_map(|r| op.operands.iter().find(|o| o.role == Some(*r)))?;
    let sh = o.ty.as_ref().and_then(|t| t.mlir()).and_then(|t| t.shaped())?;
    let n = u64::try_from(sh.num_elements()?).ok()?;
    let bits = u64::from(sh.elem.dtype()?.bits());
    n.checked_mul(bits).map(|b| b.div_ceil(8))
}
