//! "One iteration earlier" for the induction ([`super::induct`]): the map that hands a loop's facts to the next
//! iteration, one per age for a deep invariant.

use super::exec::{Base, Engine, Val};
use super::induct::{head_var, var_id};
use super::term::{Atom, Lin};
use std::collections::HashMap;

/// "One iteration earlier" for the terms of an iteration's facts: the index `i − step`, each carried value and
/// each stored buffer's head reads replaced by those of the previous iteration. With `depth` > 1 (a deep
/// invariant), the values of d iterations earlier move to d + 1: a fact handed over again is older by one, and
/// speaks of the iteration that started it, not of the one after (their values are not the same).
pub(super) struct Shift {
    vars: HashMap<u32, Lin>,
    versions: HashMap<u32, u32>,
}

impl Shift {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        e: &mut Engine<'_, '_>,
        name: &str,
        i: &Lin,
        prev_i: &Option<Lin>,
        heads: &[Val],
        stored: &[Base],
        head_version: &HashMap<Base, u32>,
        depth: u8,
    ) -> Shift {
        let mut vars = HashMap::new();
        if let (Some(id), Some(p)) = (var_id(&Some(i.clone())), prev_i) {
            vars.insert(id, p.clone());
        }
        let earlier =
            |d: u8| if d == 1 { "one iteration earlier".to_string() } else { format!("{d} iterations earlier") };
        for (k, h) in heads.iter().enumerate() {
            let Some(mut from) = head_var(h) else { continue };
            for d in 1..=depth {
                let v = e.fresh_carried(format!("{name}: carried value {k} {}", earlier(d)));
                let Some(id) = var_id(&Some(v.clone())) else { break };
                vars.insert(from, v);
                from = id;
            }
        }
        let mut versions = HashMap::new();
        for b in stored {
            let Some(&(mut from)) = head_version.get(b) else { continue };
            for _ in 1..=depth {
                let v = e.fresh_version();
                versions.insert(from, v);
                from = v;
            }
        }
        Shift { vars, versions }
    }

    pub(super) fn apply(&self, a: &Atom) -> Option<Lin> {
        match a {
            Atom::Var(v) => self.vars.get(&v.id).cloned(),
            Atom::Load { buf, idx, version } => {
                let version = *self.versions.get(version)?;
                Some(Lin::atom(Atom::Load { buf: *buf, idx: idx.clone(), version }))
            }
            _ => None,
        }
    }
}
