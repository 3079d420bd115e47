//! Small sets of indices (cube rows, case-split levels) as bit words: the provenance of what the search derives.

/// A set of small indices.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Bits(Vec<u64>);

impl Bits {
    pub fn one(i: usize) -> Bits {
        let mut b = Bits::default();
        b.insert(i);
        b
    }

    pub fn insert(&mut self, i: usize) {
        let w = i / 64;
        if self.0.len() <= w {
            self.0.resize(w + 1, 0);
        }
        self.0[w] |= 1 << (i % 64);
    }

    pub fn remove(&mut self, i: usize) {
        if let Some(w) = self.0.get_mut(i / 64) {
            *w &= !(1 << (i % 64));
        }
    }

    pub fn contains(&self, i: usize) -> bool {
        self.0.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    pub fn union(&mut self, o: &Bits) {
        if self.0.len() < o.0.len() {
            self.0.resize(o.0.len(), 0);
        }
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a |= b;
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0
            .iter()
            .enumerate()
            .flat_map(|(w, &x)| (0..64).filter(move |b| x & (1 << b) != 0).map(move |b| w * 64 + b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_of_indices() {
        let mut a = Bits::one(3);
        a.union(&Bits::one(130));
        assert!(a.contains(3) && a.contains(130) && !a.contains(64));
        a.remove(3);
        assert_eq!(a.iter().collect::<Vec<_>>(), vec![130]);
    }
}
