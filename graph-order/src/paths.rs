//! Lower bounds on max pressure from disjoint paths (Menger's theorem), for
//! the exact search: when a task runs, every path from a done task to a task
//! not yet done passes through a held result (the last done task on it), so
//! as many results are held as there are vertex-disjoint such paths.
//!
//! Which tasks are surely done, and which surely not, when a task `t` of a
//! set `T` runs first (or last) of `T`:
//!
//! - **first of `T`**: the ancestors of `t` are done; `T` and everything
//!   below it are not. This is what a shuffle needs: when the first output
//!   runs, each input is still held or has every other piece held.
//! - **last of `T`**: the ancestors of `T` are done (the other members of
//!   `T` too); `t` and everything below it are not. This is what a reduction
//!   needs: when the last chunk runs, every other chunk has something held.
//!
//! Some member of `T` runs first and some runs last in every order, so the
//! smallest count over the members that can be first (last) is a bound.

/// A graph over local indexes `0..m` as compressed rows of dependencies and
/// dependents, each row sorted, with bitset rows of `words` words for its
/// ancestors (each task included) and descendants (each task included).
pub(crate) struct Local<'a> {
    pub(crate) dep_off: &'a [u32],
    pub(crate) deps: &'a [u32],
    pub(crate) dpt_off: &'a [u32],
    pub(crate) dpts: &'a [u32],
    pub(crate) anc: &'a [u64],
    pub(crate) below: &'a [u64],
    pub(crate) words: usize,
}

/// How many sets `T` [`bound`] tries around high fan-in tasks.
const FAN_INS: usize = 4;

/// The largest set `T` tried: each member costs a max-flow.
const MAX_SET: usize = 64;

impl Local<'_> {
    fn m(&self) -> usize {
        self.dep_off.len() - 1
    }

    fn deps_of(&self, v: usize) -> &[u32] {
        &self.deps[self.dep_off[v] as usize..self.dep_off[v + 1] as usize]
    }

    fn dpts_of(&self, v: usize) -> &[u32] {
        &self.dpts[self.dpt_off[v] as usize..self.dpt_off[v + 1] as usize]
    }

    fn anc_of(&self, v: usize) -> &[u64] {
        &self.anc[v * self.words..(v + 1) * self.words]
    }

    fn below_of(&self, v: usize) -> &[u64] {
        &self.below[v * self.words..(v + 1) * self.words]
    }
}

fn has(bits: &[u64], v: usize) -> bool {
    bits[v / 64] >> (v % 64) & 1 == 1
}

/// A bound on the max pressure of every order of `g`: the best over a few
/// sets `T` (the tasks without dependents; the inputs of the tasks of
/// highest fan-in, and the tops of the linear chains that end in them) of
/// the first-of and last-of counts. Stops once it reaches `enough`; only
/// returns values above `floor` (else `floor`).
pub(crate) fn bound(g: &Local<'_>, floor: u32, enough: u32) -> u32 {
    let m = g.m();
    let mut sets: Vec<Vec<u32>> = Vec::new();
    let sinks: Vec<u32> = (0..m as u32)
        .filter(|&v| g.dpts_of(v as usize).is_empty())
        .collect();
    sets.push(sinks);
    let mut fan_in: Vec<u32> = (0..m as u32)
        .filter(|&v| g.deps_of(v as usize).len() >= 2)
        .collect();
    fan_in.sort_by_key(|&v| (std::cmp::Reverse(g.deps_of(v as usize).len()), v));
    for &r in fan_in.iter().take(FAN_INS) {
        let inputs = g.deps_of(r as usize).to_vec();
        // Climb each input's linear chain: a task with one input that has
        // no other dependent.
        let mut tops: Vec<u32> = inputs
            .iter()
            .map(|&u| {
                let mut u = u as usize;
                while let &[p] = g.deps_of(u) {
                    if g.dpts_of(p as usize).len() != 1 {
                        break;
                    }
                    u = p as usize;
                }
                u as u32
            })
            .collect();
        tops.sort_unstable();
        tops.dedup();
        if tops != inputs {
            sets.push(tops);
        }
        sets.push(inputs);
    }
    let mut best = floor;
    let mut net = Net::default();
    for set in sets.iter().filter(|s| s.len() >= 2 && s.len() <= MAX_SET) {
        for last in [false, true] {
            best = best.max(set_bound(g, set, last, best, enough, &mut net));
            if best >= enough {
                return best;
            }
        }
    }
    best
}

/// The smallest count over the members of `set` that can run first (or
/// `last`); `floor` as soon as one is at most `floor`.
fn set_bound(g: &Local<'_>, set: &[u32], last: bool, floor: u32, cap: u32, net: &mut Net) -> u32 {
    let words = g.words;
    let mut union = vec![0_u64; words];
    for &t in set {
        let row = if last {
            g.anc_of(t as usize)
        } else {
            g.below_of(t as usize)
        };
        for (u, &r) in union.iter_mut().zip(row) {
            *u |= r;
        }
    }
    let mut least = cap;
    let mut from = vec![0_u64; words];
    let mut to = vec![0_u64; words];
    for &t in set {
        let t = t as usize;
        // First: no other member above `t`; last: none below.
        let blocked = set.iter().any(|&o| {
            let o = o as usize;
            o != t
                && if last {
                    has(g.below_of(t), o)
                } else {
                    has(g.anc_of(t), o)
                }
        });
        if blocked {
            continue;
        }
        if last {
            // Every other member and its ancestors are done, and `t`'s.
            from.copy_from_slice(&union);
            to.copy_from_slice(g.below_of(t));
        } else {
            from.copy_from_slice(g.anc_of(t));
            to.copy_from_slice(&union);
        }
        from[t / 64] &= !(1 << (t % 64));
        least = least.min(net.disjoint_paths(g, &from, &to, least));
        if least <= floor {
            return floor;
        }
    }
    least
}

/// A unit-capacity flow network: each task split into an in and an out
/// node joined by one unit, so paths are vertex-disjoint.
#[derive(Default)]
struct Net {
    head: Vec<u32>,
    next: Vec<u32>,
    to: Vec<u32>,
    cap: Vec<u32>,
    parent: Vec<u32>,
    queue: Vec<u32>,
}

const NIL: u32 = u32::MAX;

impl Net {
    fn edge(&mut self, a: usize, b: usize, cap: u32) {
        for (x, y, c) in [(a, b, cap), (b, a, 0)] {
            self.next.push(self.head[x]);
            self.head[x] = self.to.len() as u32;
            self.to.push(y as u32);
            self.cap.push(c);
        }
    }

    /// The most vertex-disjoint paths from a task of `from` to one of `to`
    /// (paths may share their end in `to`), counted up to `cap`.
    fn disjoint_paths(&mut self, g: &Local<'_>, from: &[u64], to: &[u64], cap: u32) -> u32 {
        let m = g.m();
        let (source, sink) = (2 * m, 2 * m + 1);
        self.head.clear();
        self.head.resize(2 * m + 2, NIL);
        self.next.clear();
        self.to.clear();
        self.cap.clear();
        for v in 0..m {
            if has(to, v) {
                self.edge(2 * v, sink, u32::MAX);
                continue;
            }
            self.edge(2 * v, 2 * v + 1, 1);
            for &w in g.dpts_of(v) {
                self.edge(2 * v + 1, 2 * w as usize, 1);
            }
            if has(from, v) {
                self.edge(source, 2 * v, 1);
            }
        }
        let mut flow = 0;
        while flow < cap {
            // Breadth-first search for an augmenting path; `parent` holds
            // the edge that reached each node.
            self.parent.clear();
            self.parent.resize(2 * m + 2, NIL);
            self.queue.clear();
            self.queue.push(source as u32);
            let mut at = 0;
            while at < self.queue.len() && self.parent[sink] == NIL {
                let x = self.queue[at] as usize;
                at += 1;
                let mut e = self.head[x];
                while e != NIL {
                    let y = self.to[e as usize] as usize;
                    if self.cap[e as usize] > 0 && self.parent[y] == NIL && y != source {
                        self.parent[y] = e;
                        self.queue.push(y as u32);
                    }
                    e = self.next[e as usize];
                }
            }
            if self.parent[sink] == NIL {
                break;
            }
            let mut y = sink;
            while y != source {
                let e = self.parent[y] as usize;
                self.cap[e] -= 1;
                self.cap[e ^ 1] += 1;
                y = self.to[e ^ 1] as usize;
            }
            flow += 1;
        }
        flow
    }
}
