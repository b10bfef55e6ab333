//! The pool's bookkeeping, like CuPy's arena: which byte ranges of which driver allocations are
//! in buffers and which are free on which stream, and how free ranges split and merge. Plain
//! integers, no CUDA calls: the pool (`memory.rs`) asks the driver for allocations, hands them
//! here, and returns to the driver what [`Arena::release`] gives back.
//!
//! - An *allocation* is one driver allocation `[base, base + size)`. Its *chunks* tile it: every
//!   byte lies in exactly one chunk. A chunk is *live* (one buffer's) or *free on a stream*
//!   (identified by a key; `S` is the stream itself, kept so the pool can order against it).
//! - [`Arena::take`] is best fit: the smallest free chunk of at least the size on the requesting
//!   stream (lowest address among equals), else the smallest on another stream the caller
//!   accepts (the caller then orders its stream after that one). The front of the chunk is
//!   handed out; the rest stays free, on the chunk's stream.
//! - [`Arena::free`] makes a live chunk free on a stream and merges it with the free neighbours
//!   of the same allocation on the same stream. Free neighbours on different streams stay apart:
//!   each is protected by its own stream's order.
//! - [`Arena::release`] removes the allocations with no live chunk (whatever streams their free
//!   chunks are on); partly used allocations stay, with their free chunks cached.
//!
//! Small and large requests are kept apart, as PyTorch's caching allocator keeps its small and
//! large pools: a request of at most [`SMALL_MAX`] bytes is *small* and is served only by chunks
//! of small allocations (those of at most `SMALL_MAX` bytes), a larger one only by chunks of large
//! allocations. Within its class a request splits the best-fitting chunk, as CuPy does (splitting
//! wastes no bytes, while a fresh driver allocation costs a synchronous `cuMemAlloc`). So a
//! long-lived small buffer can pin at most one small allocation (at most 1 MiB), never a large
//! one: after a process has dropped its large arrays and keeps a few small ones,
//! [`Arena::release`] gives every large allocation back. Sizes are multiples of 512 (the pool
//! rounds them), so chunks stay 512-aligned relative to their allocation.
//!
//! Invariants (checked after every operation by the tests): chunks tile their allocations;
//! no two neighbouring free chunks of one allocation are on the same stream; the free index holds
//! exactly the free chunks; the counters equal the sums they stand for.

use std::collections::{BTreeMap, BTreeSet, HashMap};

/// A device address.
pub(crate) type Addr = u64;

/// The largest small request, and the largest small allocation (PyTorch's `kSmallSize`).
pub(crate) const SMALL_MAX: usize = 1 << 20;

/// Which chunks may serve a request: those of allocations of the request's class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    /// At most [`SMALL_MAX`] bytes.
    Small = 0,
    Large = 1,
}

impl Class {
    fn of(size: usize) -> Class {
        if size <= SMALL_MAX { Class::Small } else { Class::Large }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Live,
    /// Free on the stream with this key.
    Free(usize),
}

#[derive(Clone, Copy, Debug)]
struct Chunk {
    /// The base address of the chunk's allocation.
    base: Addr,
    size: usize,
    state: State,
    /// The class of the chunk's allocation.
    class: Class,
}

struct Allocation {
    size: usize,
    /// Number of live chunks.
    live: usize,
}

/// The free chunks of one stream, by (size, address) for best fit, one set per [`Class`].
struct FreeList<S> {
    stream: S,
    chunks: [BTreeSet<(usize, Addr)>; 2],
}

impl<S> FreeList<S> {
    fn new(stream: S) -> FreeList<S> {
        FreeList { stream, chunks: [BTreeSet::new(), BTreeSet::new()] }
    }

    fn of(&mut self, class: Class) -> &mut BTreeSet<(usize, Addr)> {
        &mut self.chunks[class as usize]
    }

    fn is_empty(&self) -> bool {
        self.chunks.iter().all(BTreeSet::is_empty)
    }
}

/// A chunk handed out by [`Arena::take`].
#[derive(Debug)]
pub(crate) struct Taken<S> {
    pub addr: Addr,
    /// The key and stream the chunk was free on, when not the requesting stream: the caller
    /// must order the requesting stream after it (or give the chunk back to it with
    /// [`Arena::free`]).
    pub from: Option<(usize, S)>,
}

/// What [`Arena::release`] removed: driver allocations to free, and the streams whose pending
/// work may still use them.
#[derive(Debug)]
pub(crate) struct Released<S> {
    /// (base, size) of each allocation.
    pub allocations: Vec<(Addr, usize)>,
    pub streams: Vec<S>,
}

pub(crate) struct Arena<S> {
    /// Every chunk of every allocation, by address.
    chunks: BTreeMap<Addr, Chunk>,
    allocations: BTreeMap<Addr, Allocation>,
    /// By stream key; a stream with no free chunk has no entry.
    free: HashMap<usize, FreeList<S>>,
    /// Bytes in live chunks.
    used: usize,
    /// Bytes in allocations.
    held: usize,
    /// Number of free chunks.
    free_chunks: usize,
}

impl<S: Clone> Arena<S> {
    pub fn new() -> Arena<S> {
        Arena {
            chunks: BTreeMap::new(),
            allocations: BTreeMap::new(),
            free: HashMap::new(),
            used: 0,
            held: 0,
            free_chunks: 0,
        }
    }

    /// Bytes in live chunks.
    pub fn used(&self) -> usize {
        self.used
    }

    /// Bytes in allocations (live plus free chunks). The pool counts these itself, with its
    /// reservations; the tests compare.
    #[cfg(test)]
    pub fn held(&self) -> usize {
        self.held
    }

    /// Bytes in free chunks.
    pub fn free_bytes(&self) -> usize {
        self.held - self.used
    }

    /// Number of free chunks.
    pub fn free_chunks(&self) -> usize {
        self.free_chunks
    }

    /// Registers a new driver allocation `[base, base + size)`, handed out whole: one live chunk.
    pub fn add_allocation(&mut self, base: Addr, size: usize) {
        debug_assert!(size > 0, "an empty allocation");
        debug_assert!(
            self.allocation_of(base).is_none()
                && self.chunks.range(base..base + size as u64).next().is_none(),
            "allocation {base:#x}+{size} overlaps one already registered"
        );
        self.allocations.insert(base, Allocation { size, live: 1 });
        self.chunks.insert(
            base,
            Chunk {
                base,
                size,
                state: State::Live,
                class: Class::of(size),
            },
        );
        self.used += size;
        self.held += size;
    }

    /// Takes `size` bytes (> 0) for the stream `key`: the best-fitting free chunk of the
    /// request's class on that stream, else on another stream for which `foreign_ok` holds;
    /// `None` when nothing fits.
    pub fn take(
        &mut self,
        size: usize,
        key: usize,
        foreign_ok: impl Fn(&S) -> bool,
    ) -> Option<Taken<S>> {
        debug_assert!(size > 0, "an empty request");
        let class = Class::of(size);
        let fit = |list: &FreeList<S>| list.chunks[class as usize].range((size, 0)..).next().copied();
        let (from, (chunk_size, addr)) = match self.free.get(&key).and_then(fit) {
            Some(own) => (key, own),
            None => self
                .free
                .iter()
                .filter(|(k, l)| **k != key && foreign_ok(&l.stream))
                .filter_map(|(k, l)| Some((*k, fit(l)?)))
                .min_by_key(|(_, fit)| *fit)?,
        };

        let list = self.free.get_mut(&from)?;
        list.of(class).remove(&(chunk_size, addr));
        let foreign = (from != key).then(|| (from, list.stream.clone()));
        let chunk = self.chunks.get_mut(&addr)?;
        chunk.state = State::Live;
        chunk.size = size;
        let base = chunk.base;
        if chunk_size > size {
            // The rest stays free on its stream. Its right neighbour was the chunk's, which
            // (by the invariant) is not free on that stream, so there is nothing to merge.
            let rest = addr + size as u64;
            let rest_size = chunk_size - size;
            self.chunks.insert(
                rest,
                Chunk {
                    base,
                    size: rest_size,
                    state: State::Free(from),
                    class,
                },
            );
            list.of(class).insert((rest_size, rest));
        } else {
            self.free_chunks -= 1;
        }
        if list.is_empty() {
            self.free.remove(&from);
        }
        if let Some(a) = self.allocations.get_mut(&base) {
            a.live += 1;
        }
        self.used += size;
        Some(Taken {
            addr,
            from: foreign,
        })
    }

    /// Makes the live chunk at `addr` free on the stream `key` (`stream` is that stream) and
    /// merges it with its free neighbours on that stream. `false` if no live chunk starts at
    /// `addr` (nothing changes).
    pub fn free(&mut self, addr: Addr, key: usize, stream: &S) -> bool {
        let Some(chunk) = self.chunks.get(&addr).copied() else {
            return false;
        };
        if chunk.state != State::Live {
            return false;
        }
        self.used -= chunk.size;
        if let Some(a) = self.allocations.get_mut(&chunk.base) {
            a.live -= 1;
        }

        let mergeable = |c: &Chunk| c.base == chunk.base && c.state == State::Free(key);
        let mut start = addr;
        let mut size = chunk.size;
        let next = addr + chunk.size as u64;
        if let Some(n) = self.chunks.get(&next).copied()
            && mergeable(&n)
        {
            self.chunks.remove(&next);
            self.unindex(key, chunk.class, n.size, next);
            size += n.size;
        }
        if let Some((&prev, p)) = self.chunks.range(..addr).next_back()
            && mergeable(p)
        {
            let p_size = p.size;
            self.chunks.remove(&addr);
            self.unindex(key, chunk.class, p_size, prev);
            start = prev;
            size += p_size;
        }
        self.chunks.insert(
            start,
            Chunk {
                base: chunk.base,
                size,
                state: State::Free(key),
                class: chunk.class,
            },
        );
        self.free
            .entry(key)
            .or_insert_with(|| FreeList::new(stream.clone()))
            .of(chunk.class)
            .insert((size, start));
        self.free_chunks += 1;
        true
    }

    /// Removes a free chunk from its stream's index (keeping the stream's entry, which the caller
    /// is about to fill again).
    fn unindex(&mut self, key: usize, class: Class, size: usize, addr: Addr) {
        if let Some(list) = self.free.get_mut(&key) {
            list.of(class).remove(&(size, addr));
        }
        self.free_chunks -= 1;
    }

    /// Removes every allocation with no live chunk and returns them, with the streams their
    /// free chunks were on.
    pub fn release(&mut self) -> Released<S> {
        let bases: Vec<(Addr, usize)> = self
            .allocations
            .iter()
            .filter(|(_, a)| a.live == 0)
            .map(|(&b, a)| (b, a.size))
            .collect();
        let mut streams: BTreeMap<usize, S> = BTreeMap::new();
        for &(base, size) in &bases {
            let inside: Vec<(Addr, Chunk)> = self
                .chunks
                .range(base..base + size as u64)
                .map(|(&a, &c)| (a, c))
                .collect();
            for (addr, c) in inside {
                self.chunks.remove(&addr);
                if let State::Free(key) = c.state {
                    self.free_chunks -= 1;
                    if let Some(list) = self.free.get_mut(&key) {
                        list.of(c.class).remove(&(c.size, addr));
                        streams.entry(key).or_insert_with(|| list.stream.clone());
                        if list.is_empty() {
                            self.free.remove(&key);
                        }
                    }
                }
            }
            self.allocations.remove(&base);
            self.held -= size;
        }
        Released {
            allocations: bases,
            streams: streams.into_values().collect(),
        }
    }

    /// The allocation containing `addr`, as (base, size).
    fn allocation_of(&self, addr: Addr) -> Option<(Addr, usize)> {
        let (&base, a) = self.allocations.range(..=addr).next_back()?;
        (addr < base + a.size as u64).then_some((base, a.size))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: usize = 512;

    /// Streams in the tests are their names; the key is the name's first byte.
    fn key(s: &str) -> usize {
        s.as_bytes()[0] as usize
    }

    impl<S: Clone + std::fmt::Debug + PartialEq> Arena<S> {
        /// Panics unless every invariant of the module header holds.
        fn check(&self) {
            let mut used = 0;
            let mut held = 0;
            let mut free = 0;
            for (&base, a) in &self.allocations {
                held += a.size;
                let mut at = base;
                let mut live = 0;
                let mut prev: Option<State> = None;
                for (&addr, c) in self.chunks.range(base..base + a.size as u64) {
                    assert_eq!(addr, at, "gap or overlap at {addr:#x}");
                    assert_eq!(c.base, base, "chunk {addr:#x} names another allocation");
                    assert_eq!(c.class, Class::of(a.size), "chunk {addr:#x} of another class");
                    assert!(c.size > 0);
                    match c.state {
                        State::Live => {
                            live += 1;
                            used += c.size;
                        }
                        State::Free(k) => {
                            free += 1;
                            assert_ne!(prev, Some(c.state), "unmerged neighbours at {addr:#x}");
                            let list = self.free.get(&k).expect("free chunk of an unlisted stream");
                            assert!(list.chunks[c.class as usize].contains(&(c.size, addr)), "unindexed {addr:#x}");
                        }
                    }
                    prev = Some(c.state);
                    at += c.size as u64;
                }
                assert_eq!(at, base + a.size as u64, "allocation {base:#x} not tiled");
                assert_eq!(live, a.live, "live count of {base:#x}");
            }
            let chunks_in_allocations: usize = self
                .allocations
                .iter()
                .map(|(&b, a)| self.chunks.range(b..b + a.size as u64).count())
                .sum();
            assert_eq!(chunks_in_allocations, self.chunks.len(), "stray chunks");
            let indexed: usize = self.free.values().flat_map(|l| &l.chunks).map(BTreeSet::len).sum();
            assert_eq!(indexed, free, "free index size");
            assert!(self.free.values().all(|l| !l.is_empty()), "empty free list kept");
            for (&k, l) in &self.free {
                for class in [Class::Small, Class::Large] {
                    for &(size, addr) in &l.chunks[class as usize] {
                        let c = self.chunks[&addr];
                        assert_eq!((c.size, c.state, c.class), (size, State::Free(k), class));
                    }
                }
            }
            assert_eq!((self.used, self.held, self.free_chunks), (used, held, free));
        }

        fn take_on(&mut self, size: usize, stream: &str) -> Option<Taken<S>> {
            let t = self.take(size, key(stream), |_| true);
            self.check();
            t
        }

        fn free_on(&mut self, addr: Addr, stream: S, name: &str) {
            assert!(
                self.free(addr, key(name), &stream),
                "{addr:#x} was not live"
            );
            self.check();
        }

        /// The free chunks as (address, size), by address.
        fn free_list(&self) -> Vec<(Addr, usize)> {
            self.chunks
                .iter()
                .filter(|(_, c)| c.state != State::Live)
                .map(|(&a, c)| (a, c.size))
                .collect()
        }
    }

    /// An arena with one allocation of `size` at `base`, entirely free on stream "a".
    fn one_free(base: Addr, size: usize) -> Arena<&'static str> {
        let mut ar = Arena::new();
        ar.add_allocation(base, size);
        ar.free_on(base, "a", "a");
        ar
    }

    #[test]
    fn a_new_allocation_is_live_and_counted() {
        let mut ar: Arena<&str> = Arena::new();
        ar.add_allocation(0x10000, 4 * K);
        ar.check();
        assert_eq!(
            (ar.used(), ar.held(), ar.free_bytes(), ar.free_chunks()),
            (4 * K, 4 * K, 0, 0)
        );
        ar.free_on(0x10000, "a", "a");
        assert_eq!(
            (ar.used(), ar.held(), ar.free_bytes(), ar.free_chunks()),
            (0, 4 * K, 4 * K, 1)
        );
        // an exact fit is reused whole
        let t = ar.take_on(4 * K, "a").unwrap();
        assert_eq!(t.addr, 0x10000);
        assert!(t.from.is_none());
        assert_eq!((ar.used(), ar.free_chunks()), (4 * K, 0));
    }

    #[test]
    fn split_hands_out_the_front_and_keeps_the_rest_free() {
        let mut ar = one_free(0x10000, 2048 * K); // 1 MiB
        let b = ar.take_on(512 * K, "a").unwrap(); // 256 KiB
        let c = ar.take_on(512 * K, "a").unwrap();
        assert_eq!(b.addr, 0x10000);
        assert_eq!(c.addr, 0x10000 + 512 * K as u64);
        assert_eq!(ar.free_list(), vec![(0x10000 + 1024 * K as u64, 1024 * K)]);
        assert_eq!(
            (ar.used(), ar.held(), ar.free_bytes(), ar.free_chunks()),
            (1024 * K, 2048 * K, 1024 * K, 1)
        );
        // too big for what is left
        assert!(ar.take_on(1025 * K, "a").is_none());
        let d = ar.take_on(1024 * K, "a").unwrap();
        assert_eq!(d.addr, 0x10000 + 1024 * K as u64);
        assert_eq!((ar.free_bytes(), ar.free_chunks()), (0, 0));
    }

    #[test]
    fn free_merges_with_the_right_the_left_and_both_neighbours() {
        let mut ar = one_free(0, 4 * K);
        let a: Vec<Addr> = (0..4).map(|_| ar.take_on(K, "a").unwrap().addr).collect();
        assert_eq!(a, vec![0, K as u64, 2 * K as u64, 3 * K as u64]);
        // [L L L L] -> free 2: [L L F L]
        ar.free_on(a[2], "a", "a");
        assert_eq!(ar.free_list(), vec![(a[2], K)]);
        // free 3: merges with its left neighbour -> [L L F(2)]
        ar.free_on(a[3], "a", "a");
        assert_eq!(ar.free_list(), vec![(a[2], 2 * K)]);
        // free 1: merges with its right neighbour -> [L F(3)]
        ar.free_on(a[1], "a", "a");
        assert_eq!(ar.free_list(), vec![(a[1], 3 * K)]);
        assert_eq!(ar.free_chunks(), 1);
        // and both sides: [F L F] + free the middle -> one chunk
        let mut ar = one_free(0, 3 * K);
        let x: Vec<Addr> = (0..3).map(|_| ar.take_on(K, "a").unwrap().addr).collect();
        ar.free_on(x[0], "a", "a");
        ar.free_on(x[2], "a", "a");
        assert_eq!(ar.free_chunks(), 2);
        ar.free_on(x[1], "a", "a");
        assert_eq!(ar.free_list(), vec![(0, 3 * K)]);
        assert_eq!(
            (ar.used(), ar.free_bytes(), ar.free_chunks()),
            (0, 3 * K, 1)
        );
    }

    #[test]
    fn best_fit_takes_the_smallest_chunk_that_fits_then_the_lowest_address() {
        let mut ar: Arena<&str> = Arena::new();
        // three allocations, freed: 8K, 3K, 5K, and another 3K at a higher address
        for (base, size) in [
            (0x100000, 8 * K),
            (0x200000, 3 * K),
            (0x300000, 5 * K),
            (0x50000, 3 * K),
        ] {
            ar.add_allocation(base, size);
            ar.free_on(base, "a", "a");
        }
        // 2K: the 3K chunks fit best; the lower address first
        assert_eq!(ar.take_on(2 * K, "a").unwrap().addr, 0x50000);
        assert_eq!(ar.take_on(2 * K, "a").unwrap().addr, 0x200000);
        // 4K: the 5K chunk (not the 8K one)
        assert_eq!(ar.take_on(4 * K, "a").unwrap().addr, 0x300000);
        // 1K: the 1K remainders now fit exactly, lowest first
        assert_eq!(ar.take_on(K, "a").unwrap().addr, 0x50000 + 2 * K as u64);
        // 6K: only the 8K chunk
        assert_eq!(ar.take_on(6 * K, "a").unwrap().addr, 0x100000);
        assert_eq!(
            ar.free_list(),
            vec![
                (0x100000 + 6 * K as u64, 2 * K),
                (0x200000 + 2 * K as u64, K),
                (0x300000 + 4 * K as u64, K)
            ]
        );
    }

    #[test]
    fn neighbouring_allocations_never_merge() {
        // two driver allocations back to back in the address space
        let mut ar: Arena<&str> = Arena::new();
        ar.add_allocation(0, 2 * K);
        ar.add_allocation(2 * K as u64, 2 * K);
        ar.free_on(0, "a", "a");
        ar.free_on(2 * K as u64, "a", "a");
        assert_eq!(ar.free_chunks(), 2);
        assert!(ar.take_on(3 * K, "a").is_none());
        let r = ar.release();
        assert_eq!(r.allocations, vec![(0, 2 * K), (2 * K as u64, 2 * K)]);
        ar.check();
    }

    #[test]
    fn streams_reuse_their_own_chunks_first_and_merge_only_with_their_own() {
        let mut ar = one_free(0, 4 * K); // free on "a"
        // "b" has nothing of its own: it takes "a"'s chunk and is told so
        let t = ar.take_on(K, "b").unwrap();
        assert_eq!(t.addr, 0);
        assert_eq!(t.from, Some((key("a"), "a")));
        // the rest stays on "a"
        assert_eq!(ar.free_list(), vec![(K as u64, 3 * K)]);
        // freed on "b", it does not merge with "a"'s neighbour
        ar.free_on(0, "b", "b");
        assert_eq!(ar.free_list(), vec![(0, K), (K as u64, 3 * K)]);
        // each stream prefers its own chunk, even a worse fit
        let tb = ar.take_on(K, "b").unwrap();
        assert_eq!((tb.addr, tb.from), (0, None));
        ar.free_on(0, "b", "b");
        let ta = ar.take_on(K, "a").unwrap();
        assert_eq!((ta.addr, ta.from), (K as u64, None));
        ar.free_on(K as u64, "a", "a");
        // a chunk given back to "a" (the caller could not order its stream) merges there again
        let t = ar.take_on(3 * K, "b").unwrap();
        assert_eq!((t.addr, t.from), (K as u64, Some((key("a"), "a"))));
        ar.free_on(t.addr, "a", "a");
        assert_eq!(ar.free_list(), vec![(0, K), (K as u64, 3 * K)]);
        // "c" may only use streams the caller accepts
        assert!(ar.take(K, key("c"), |s| *s == "z").is_none());
        let t = ar.take(K, key("c"), |s| *s == "a").unwrap();
        assert_eq!((t.addr, t.from), (K as u64, Some((key("a"), "a"))));
        ar.check();
        // among other streams' chunks, the best fit wins
        let t = ar.take_on(K, "c").unwrap();
        assert_eq!((t.addr, t.from), (0, Some((key("b"), "b"))));
        assert_eq!(ar.free_list(), vec![(2 * K as u64, 2 * K)]);
    }

    #[test]
    fn release_returns_only_entirely_free_allocations() {
        let mut ar: Arena<&str> = Arena::new();
        ar.add_allocation(0x1000000, 8 * K);
        ar.add_allocation(0x2000000, 4 * K);
        ar.add_allocation(0x3000000, 4 * K);
        ar.free_on(0x1000000, "a", "a");
        ar.free_on(0x2000000, "a", "a");
        // 0x1000000: split, partly live
        let live = ar.take_on(2 * K, "a").unwrap().addr;
        assert_eq!(live, 0x2000000); // best fit: the 4K allocation
        let live2 = ar.take_on(6 * K, "a").unwrap().addr;
        assert_eq!(live2, 0x1000000);
        ar.free_on(live, "a", "a");
        // now: 0x1000000 = [L 6K][F 2K a], 0x2000000 = [F 4K a], 0x3000000 = [L 4K]
        // "b" takes (best fit) and frees 1K of 0x1000000's rest, then takes it again:
        // 0x1000000 = [L 6K][L 1K b][F 1K a]
        let t = ar.take_on(K, "b").unwrap();
        assert_eq!(t.addr, 0x1000000 + 6 * K as u64);
        ar.free_on(t.addr, "b", "b");
        let t = ar.take_on(K, "b").unwrap();
        assert_eq!(t.addr, 0x1000000 + 6 * K as u64);
        // "c" takes and frees 3K of 0x2000000
        let t2 = ar.take_on(3 * K, "c").unwrap();
        assert_eq!(t2.addr, 0x2000000);
        ar.free_on(t2.addr, "c", "c");
        // 0x2000000 = [F 3K on c][F 1K on a]: entirely free over two streams
        assert_eq!(
            (ar.used(), ar.held(), ar.free_chunks()),
            (6 * K + K + 4 * K, 16 * K, 3)
        );
        let r = ar.release();
        ar.check();
        assert_eq!(r.allocations, vec![(0x2000000, 4 * K)]);
        let mut streams = r.streams.clone();
        streams.sort();
        assert_eq!(streams, vec!["a", "c"]);
        // the partly used allocation keeps its free chunk cached
        assert_eq!(
            (ar.used(), ar.held(), ar.free_bytes(), ar.free_chunks()),
            (11 * K, 12 * K, K, 1)
        );
        assert_eq!(ar.free_list(), vec![(0x1000000 + 7 * K as u64, K)]);
        // nothing more to release until the live chunks go
        assert!(ar.release().allocations.is_empty());
        ar.free_on(t.addr, "b", "b");
        ar.free_on(live2, "a", "a");
        ar.free_on(0x3000000, "a", "a");
        let r = ar.release();
        ar.check();
        assert_eq!(r.allocations, vec![(0x1000000, 8 * K), (0x3000000, 4 * K)]);
        assert_eq!((ar.used(), ar.held(), ar.free_chunks()), (0, 0, 0));
        assert!(ar.free.is_empty() && ar.chunks.is_empty() && ar.allocations.is_empty());
    }

    /// Issue 33, item 8: a small request never splits a large allocation, so a process that
    /// dropped its large arrays and keeps small ones can give every large allocation back.
    #[test]
    fn small_requests_never_split_large_allocations() {
        const MIB: usize = 1 << 20;
        let big = 2048 * MIB; // 2 GiB, dropped
        let mut ar = one_free(0x1_0000_0000, big);
        // 100 small requests: none fits a large chunk, so each needs a small allocation
        let mut small = Vec::new();
        for i in 0..100u64 {
            let size = (1 + i as usize % 8) * K;
            assert!(ar.take_on(size, "a").is_none(), "a small request took a large chunk");
            let base = 0x10_0000 + i * 0x1000;
            ar.add_allocation(base, size);
            small.push(base);
        }
        ar.check();
        // a small request is served by a small free chunk, a large one by a large chunk
        ar.free_on(small[99], "a", "a");
        assert_eq!(ar.take_on(K, "a").unwrap().addr, small[99]);
        let l = ar.take_on(SMALL_MAX + K, "a").unwrap();
        assert_eq!(l.addr, 0x1_0000_0000);
        ar.free_on(l.addr, "a", "a");
        // the small buffers pin only their own allocations
        let r = ar.release();
        ar.check();
        assert_eq!(r.allocations, vec![(0x1_0000_0000, big)]);
        assert!(ar.held() < 128 * MIB, "{} bytes held", ar.held());
        // the boundary: SMALL_MAX is small, one rounding step more is large
        assert_eq!((Class::of(SMALL_MAX), Class::of(SMALL_MAX + K)), (Class::Small, Class::Large));
    }

    #[test]
    fn freeing_an_unknown_or_free_address_changes_nothing() {
        let mut ar = one_free(0, 4 * K);
        let t = ar.take_on(K, "a").unwrap();
        assert!(!ar.free(0x12345, key("a"), &"a"));
        assert!(!ar.free(K as u64, key("a"), &"a")); // the free remainder
        ar.check();
        ar.free_on(t.addr, "a", "a");
        assert!(!ar.free(t.addr, key("a"), &"a")); // twice
        ar.check();
        assert_eq!(ar.free_list(), vec![(0, 4 * K)]);
    }

    #[test]
    fn allocation_of_finds_the_containing_allocation() {
        let mut ar: Arena<&str> = Arena::new();
        ar.add_allocation(0x1000, 2 * K);
        assert_eq!(ar.allocation_of(0x1000), Some((0x1000, 2 * K)));
        assert_eq!(
            ar.allocation_of(0x1000 + 2 * K as u64 - 1),
            Some((0x1000, 2 * K))
        );
        assert_eq!(ar.allocation_of(0x1000 + 2 * K as u64), None);
        assert_eq!(ar.allocation_of(0xfff), None);
    }

    /// Random allocations and frees on three streams (a fresh seed each run, printed;
    /// `CUPRUM_TEST_SEED` replays one), against a simple model: live ranges are disjoint and
    /// inside their allocation, the invariants hold after every step, and once everything is
    /// freed the arena releases every allocation.
    #[test]
    fn random_sequences_keep_the_invariants() {
        use rand::Rng as _;
        let mut rng = crate::test_support::seeded();
        let mut next = move || rng.next_u64();
        let streams = ["a", "b", "c"];
        let mut ar: Arena<&str> = Arena::new();
        let mut live: Vec<(Addr, usize, &str)> = Vec::new();
        let mut next_base: Addr = 0x100000;
        for step in 0..3000 {
            if live.is_empty() || next() % 3 != 0 {
                // mostly small requests, some large ones (each class in allocations of its own)
                let size = (1 + (next() % 16) as usize) * K + if next() % 6 == 0 { SMALL_MAX } else { 0 };
                let s = streams[(next() % 3) as usize];
                let addr = match ar.take(size, key(s), |_| true) {
                    Some(t) => t.addr,
                    None => {
                        // a fresh allocation, sometimes bigger than asked, then split
                        let a_size = size * (1 + (next() % 3) as usize);
                        ar.add_allocation(next_base, a_size);
                        let base = next_base;
                        next_base += a_size as u64 + if next() % 2 == 0 { 0 } else { 0x1000 };
                        if a_size > size {
                            assert!(ar.free(base, key(s), &s));
                            let t = ar.take(size, key(s), |_| false).unwrap();
                            assert!(t.from.is_none());
                            t.addr
                        } else {
                            base
                        }
                    }
                };
                for &(a, sz, _) in &live {
                    let (lo, hi) = (addr, addr + size as u64);
                    assert!(hi <= a || a + sz as u64 <= lo, "step {step}: overlap");
                }
                let (base, a_size) = ar.allocation_of(addr).unwrap();
                assert!(addr + size as u64 <= base + a_size as u64);
                live.push((addr, size, s));
            } else {
                let i = (next() as usize) % live.len();
                let (addr, _, s) = live.swap_remove(i);
                // sometimes freed on another stream than the one it was taken on
                let s = if next() % 5 == 0 {
                    streams[(next() % 3) as usize]
                } else {
                    s
                };
                assert!(ar.free(addr, key(s), &s));
            }
            ar.check();
            assert_eq!(ar.used(), live.iter().map(|l| l.1).sum::<usize>());
            if step % 500 == 0 {
                let held = ar.held();
                let r = ar.release();
                let released: usize = r.allocations.iter().map(|a| a.1).sum();
                assert_eq!(ar.held(), held - released);
                ar.check();
            }
        }
        for (addr, _, s) in live.drain(..) {
            assert!(ar.free(addr, key(s), &s));
        }
        ar.check();
        assert_eq!(ar.used(), 0);
        ar.release();
        ar.check();
        assert_eq!((ar.held(), ar.free_chunks()), (0, 0));
    }
}
