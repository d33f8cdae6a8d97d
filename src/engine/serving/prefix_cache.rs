//! A pool member's cache of KV prefixes (spec §8.3–8.4): each session's
//! live entry, the dead entries that `reuse` left behind, and eviction in
//! the pool's order, piece by piece.
//!
//! Invariants: entries live in one map keyed by their release order, so
//! LRU eviction takes the first key (no scan) and `evict by` scans in
//! release order (ties go to the earlier release); a session has at most
//! one live entry, found through `live`; `total` is the sum of every
//! entry's units (it is what `mean_cached` integrates and what cached
//! units take of the capacity). Nothing here knows how an entry's keys
//! are computed: the caller passes them in at the Evict moment.

use std::collections::{BTreeMap, HashMap};

use super::EPS;
use super::blocks::Block;

/// One cached entry.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry<O> {
    /// The session whose prefix it is (its `serial`: entries outlive
    /// sessions, whose slots are reused).
    pub session: u64,
    /// What the caller keeps with the entry: for `evict by` keys that read
    /// attributes, the session's attributes as they were when it released
    /// the entry (an ended session) or when it reused it (a dead entry).
    pub owner: O,
    /// The units cached.
    pub units: f64,
    /// When it was released (the `last` of an eviction key).
    pub released: f64,
    /// Its place in release order.
    pub order: u64,
    /// Its identity: its place in release order when it was created. An
    /// entry that spilled pieces are added to moves in release order but
    /// keeps it (the next pool of a spill chain gathers its pieces by it).
    pub id: u64,
    /// A dead entry: what a `reuse` left unconsumed. It counts in the
    /// cache's total and is evictable, but it is nobody's `cachedin` and
    /// `drop` does not remove it.
    pub dead: bool,
    /// For a dead entry of a spill target: the dead entry whose spilled
    /// pieces it gathers, named where the `reuse` left it (that pool
    /// member, and the entry's `id` there), however many pools the pieces
    /// went through on the way.
    pub origin: Option<(u32, u64)>,
}

/// What one eviction pass removed.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Evicted {
    /// Entries removed entirely (`evicted_entries`).
    pub entries: u64,
    /// Units removed (`evicted_units`).
    pub units: f64,
}

/// A pool member's cache.
#[derive(Clone, Debug)]
pub struct Cache<O> {
    entries: BTreeMap<u64, Entry<O>>,
    live: HashMap<u64, u64>,
    /// The dead entries gathering spilled pieces, by the entry they come from.
    dead_of: HashMap<(u32, u64), u64>,
    total: f64,
    next_order: u64,
}

impl<O> Default for Cache<O> {
    fn default() -> Self {
        Cache {
            entries: BTreeMap::new(),
            live: HashMap::new(),
            dead_of: HashMap::new(),
            total: 0.0,
            next_order: 0,
        }
    }
}

impl<O> Cache<O> {
    /// An empty cache.
    pub fn new() -> Cache<O> {
        Cache::default()
    }

    /// Every entry's units, dead ones included (`mean_cached` integrates it).
    pub fn total(&self) -> f64 {
        self.total
    }

    /// How many entries there are, dead ones included.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The session's live cached units (`cachedin(p)`); dead entries are
    /// nobody's.
    pub fn live_units(&self, session: u64) -> f64 {
        self.live
            .get(&session)
            .and_then(|order| self.entries.get(order))
            .map_or(0.0, |e| e.units)
    }

    /// The entries in release order (the order `evict by` ties break in).
    pub fn entries(&self) -> impl Iterator<Item = &Entry<O>> {
        self.entries.values()
    }

    /// The owner of the session's live entry, to change (when its session
    /// ends, say).
    pub fn live_owner_mut(&mut self, session: u64) -> Option<&mut O> {
        let order = self.live.get(&session)?;
        self.entries.get_mut(order).map(|e| &mut e.owner)
    }

    /// At an admission: the session consumes its live entry, at most
    /// `limit` units rounded down to the block (`reuse (ρ)`; `inf` without
    /// a `reuse`), and gets what it consumed back (what `cached` reads).
    /// The unconsumed rest stays as a dead entry in the original's place
    /// in release order, with `dead_owner()` as its owner (the attributes
    /// as they are at the reuse).
    pub fn consume(
        &mut self,
        session: u64,
        limit: f64,
        block: Block,
        dead_owner: impl FnOnce() -> O,
    ) -> f64 {
        let Some(order) = self.live.remove(&session) else {
            return 0.0;
        };
        let Some(entry) = self.entries.get_mut(&order) else {
            return 0.0;
        };
        // f64::min ignores a NaN limit, as the reference's does.
        let consumed = entry.units.min(block.down(limit)).max(0.0);
        let rest = entry.units - consumed;
        if rest > 0.0 {
            entry.units = rest;
            entry.dead = true;
            entry.owner = dead_owner();
            self.total -= consumed;
        } else {
            // Consumed whole (`remove` takes its units off the total).
            self.remove(order);
        }
        consumed
    }

    /// At a release: `units` (already `min(ℓ, computed)` rounded down to the
    /// block) become the session's live entry, released `now`, replacing
    /// its older live entry. Nothing is stored, and the older entry stays,
    /// when `units` is not above 0 (an outer hold that caches 0 keeps what
    /// an inner one cached).
    pub fn store(&mut self, session: u64, owner: O, units: f64, now: f64) {
        if units.is_nan() || units <= 0.0 {
            return;
        }
        if let Some(old) = self.live.remove(&session) {
            self.remove(old);
        }
        self.insert(session, owner, units, now);
    }

    /// `drop P`: the session's live entry goes (not counted as an eviction).
    pub fn drop_live(&mut self, session: u64) {
        if let Some(order) = self.live.remove(&session) {
            self.remove(order);
        }
    }

    /// A spilled piece arrives: it is added to the session's live entry
    /// (created if absent), whose release time becomes `now`, so it moves
    /// to the end of the release order.
    pub fn add_piece(&mut self, session: u64, owner: O, piece: f64, now: f64) {
        let (units, id) = match self.live.remove(&session).and_then(|old| self.remove(old)) {
            Some(e) => (e.units, Some(e.id)),
            None => (0.0, None),
        };
        let order = self.push(session, owner, units + piece, now, id, None);
        self.live.insert(session, order);
    }

    /// A spilled piece of a dead entry arrives: it stays dead here, added to
    /// the dead entry that gathers the pieces of that same entry (created if
    /// absent; `origin` names it: the pool member where a `reuse` left it
    /// and its `id` there, even down a chain), whose release time becomes
    /// `now`. 0.1.0 keeps
    /// such pieces out of the session's live entry (nobody's `cachedin`, no
    /// `reuse` consumes them).
    pub fn add_dead_piece(
        &mut self,
        origin: (u32, u64),
        session: u64,
        owner: O,
        piece: f64,
        now: f64,
    ) {
        let (units, id) = match self
            .dead_of
            .remove(&origin)
            .and_then(|old| self.remove(old))
        {
            Some(e) => (e.units, Some(e.id)),
            None => (0.0, None),
        };
        let order = self.push(session, owner, units + piece, now, id, Some(origin));
        self.dead_of.insert(origin, order);
    }

    /// The entry released first (the next LRU victim), by its place in
    /// release order.
    pub fn first_order(&self) -> Option<u64> {
        self.entries.first_key_value().map(|(&order, _)| order)
    }

    /// Every entry's place in release order, in that order (the order
    /// `evict by` scans and breaks ties in), into `out`.
    pub fn orders_into(&self, out: &mut Vec<u64>) {
        out.clear();
        out.extend(self.entries.keys().copied());
    }

    /// The entry at place `order` in release order.
    pub fn get(&self, order: u64) -> Option<&Entry<O>> {
        self.entries.get(&order)
    }

    /// Evicts one piece (a block, or the whole entry without blocks) from
    /// the entry at `order`, counting it in `evicted`, and returns its
    /// units (`None` when there is no such entry). An eviction pass takes
    /// pieces one by one, each spilled before the next is chosen (spec
    /// §8.3).
    pub fn take_piece(&mut self, order: u64, block: Block, evicted: &mut Evicted) -> Option<f64> {
        let entry = self.entries.get_mut(&order)?;
        let piece = block.piece(entry.units);
        entry.units -= piece;
        self.total -= piece;
        evicted.units += piece;
        if entry.units <= 0.0 {
            evicted.entries += 1;
            let session = entry.session;
            let dead = entry.dead;
            self.remove(order);
            if !dead && self.live.get(&session) == Some(&order) {
                self.live.remove(&session);
            }
        }
        Some(piece)
    }

    fn insert(&mut self, session: u64, owner: O, units: f64, now: f64) {
        let order = self.push(session, owner, units, now, None, None);
        self.live.insert(session, order);
    }

    /// A new entry at the end of the release order (dead when it has an
    /// `origin`; a new `id` unless it continues an entry), and its place
    /// there.
    fn push(
        &mut self,
        session: u64,
        owner: O,
        units: f64,
        now: f64,
        id: Option<u64>,
        origin: Option<(u32, u64)>,
    ) -> u64 {
        let order = self.next_order;
        self.next_order += 1;
        self.entries.insert(
            order,
            Entry {
                session,
                owner,
                units,
                released: now,
                order,
                id: id.unwrap_or(order),
                dead: origin.is_some(),
                origin,
            },
        );
        self.total += units;
        order
    }

    fn remove(&mut self, order: u64) -> Option<Entry<O>> {
        let entry = self.entries.remove(&order)?;
        if let Some(origin) = entry.origin {
            self.dead_of.remove(&origin);
        }
        self.total -= entry.units;
        if self.entries.is_empty() {
            // Sums of floating-point units drift; an empty cache holds 0.
            self.total = 0.0;
        }
        Some(entry)
    }
}

/// The room a pool's cache may keep when `need` more units are to be
/// allocated: entries are evicted while `used + cached + need > cap + EPS`.
pub fn room(cap: f64, used: f64, need: f64) -> f64 {
    cap + EPS - used - need
}

/// Whole passes over a cache for the unit tests below: the loops
/// `engine::caching::evict_to` runs piece by piece, without the world.
#[cfg(test)]
impl<O: Clone> Cache<O> {
    fn evict_lru(
        &mut self,
        room: f64,
        block: Block,
        mut on_piece: impl FnMut(&Entry<O>, f64),
    ) -> Evicted {
        let mut evicted = Evicted::default();
        while self.total > room {
            let Some(order) = self.first_order() else {
                break;
            };
            let entry = self.entries[&order].clone();
            if let Some(piece) = self.take_piece(order, block, &mut evicted) {
                on_piece(&entry, piece);
            }
        }
        evicted
    }

    fn evict_by(
        &mut self,
        room: f64,
        block: Block,
        mut key: impl FnMut(&Entry<O>, &mut Vec<f64>),
        mut on_piece: impl FnMut(&Entry<O>, f64),
    ) -> Evicted {
        let mut evicted = Evicted::default();
        let (mut best_key, mut candidate, mut orders) = (Vec::new(), Vec::new(), Vec::new());
        while self.total > room {
            self.orders_into(&mut orders);
            let mut best = None;
            for &order in &orders {
                candidate.clear();
                key(&self.entries[&order], &mut candidate);
                if best.is_none() || super::order::strictly_before(&candidate, &best_key) {
                    best = Some(order);
                    std::mem::swap(&mut best_key, &mut candidate);
                }
            }
            let Some(order) = best else { break };
            let entry = self.entries[&order].clone();
            if let Some(piece) = self.take_piece(order, block, &mut evicted) {
                on_piece(&entry, piece);
            }
        }
        evicted
    }
}

#[cfg(test)]
mod tests {
    use super::{Block, Cache, Evicted, room};

    fn no_owner() {}

    #[test]
    fn a_reuse_consumes_at_most_its_limit_and_leaves_a_dead_rest() {
        // t2_cache_reuse_dead: hold 8 cache (6) -> entry 6; hold 10 reuse
        // (4) -> cached 4, a dead 2 that nobody's cachedin counts.
        let mut c: Cache<()> = Cache::new();
        c.store(0, (), 6.0, 1.0);
        assert_eq!(c.live_units(0), 6.0);
        assert_eq!(c.consume(0, 4.0, Block::new(None), no_owner), 4.0);
        assert_eq!((c.live_units(0), c.total(), c.len()), (0.0, 2.0, 1));
        // The dead 2 is not removed by `drop`.
        c.drop_live(0);
        assert_eq!(c.total(), 2.0);
    }

    #[test]
    fn a_reuse_limit_rounds_down_to_the_block() {
        // tests/serving/cache_reuse_nested_drop_lease: reuse (7) in block 4
        // consumes 4 of 12, the dead rest is 8.
        let mut c: Cache<()> = Cache::new();
        c.store(0, (), 12.0, 1.0);
        assert_eq!(c.consume(0, 7.0, Block::new(Some(4.0)), no_owner), 4.0);
        assert_eq!(c.total(), 8.0);
    }

    #[test]
    fn storing_nothing_keeps_the_older_entry() {
        // tests/serving: an outer hold caching min(1, 8) rounded down to 0 in
        // block 4 keeps the inner hold's 4; caching 1 replaces a 3.
        let mut c: Cache<()> = Cache::new();
        c.store(0, (), 4.0, 1.0);
        c.store(0, (), 0.0, 2.0);
        assert_eq!(c.live_units(0), 4.0);
        c.store(0, (), 1.0, 3.0);
        assert_eq!((c.live_units(0), c.total(), c.len()), (1.0, 1.0, 1));
    }

    #[test]
    fn lru_takes_the_oldest_release_block_by_block() {
        // t2_evict_lru_blocks: cap 12, block 2; entries 6 (released at 1) and
        // 4 (at 2); a need of 6 evicts two blocks of the first (6 -> 2).
        let block = Block::new(Some(2.0));
        let mut c: Cache<()> = Cache::new();
        c.store(0, (), 6.0, 1.0);
        c.store(1, (), 4.0, 2.0);
        let evicted = c.evict_lru(room(12.0, 0.0, 6.0), block, |_, _| {});
        assert_eq!(
            evicted,
            Evicted {
                entries: 0,
                units: 4.0
            }
        );
        assert_eq!((c.live_units(0), c.live_units(1)), (2.0, 4.0));
        // Then entry 6 (at 4); a need of 8 takes 2 (whole), 4 (whole), then
        // one block of the 6: 2 entries, 8 units.
        c.store(2, (), 6.0, 4.0);
        let evicted = c.evict_lru(room(12.0, 0.0, 8.0), block, |_, _| {});
        assert_eq!(
            evicted,
            Evicted {
                entries: 2,
                units: 8.0
            }
        );
        assert_eq!(
            (c.live_units(0), c.live_units(1), c.live_units(2)),
            (0.0, 0.0, 4.0)
        );
    }

    #[test]
    fn without_blocks_an_entry_goes_whole() {
        // t2_evict_lru_blocks: an entry of 3 goes whole to make room for 1.
        let mut c: Cache<()> = Cache::new();
        c.store(4, (), 3.0, 1.0);
        let evicted = c.evict_lru(room(10.0, 0.0, 8.0), Block::new(None), |_, _| {});
        assert_eq!(
            evicted,
            Evicted {
                entries: 1,
                units: 3.0
            }
        );
        assert!(c.is_empty());
    }

    #[test]
    fn a_dead_entry_keeps_its_release_time_for_lru() {
        // tests/serving/cache_dead_entry_keeps_release_time: the dead 5 of
        // an entry released at 1 goes before a live 2 released at 3.
        let mut c: Cache<()> = Cache::new();
        c.store(0, (), 8.0, 1.0);
        c.store(1, (), 4.0, 2.0);
        assert_eq!(c.consume(0, 3.0, Block::new(None), no_owner), 3.0);
        c.store(0, (), 2.0, 3.0);
        assert_eq!(c.consume(1, f64::INFINITY, Block::new(None), no_owner), 4.0);
        let evicted = c.evict_lru(room(12.0, 0.0, 9.0), Block::new(None), |_, _| {});
        assert_eq!(
            evicted,
            Evicted {
                entries: 1,
                units: 5.0
            }
        );
        assert_eq!((c.live_units(0), c.total()), (2.0, 2.0));
    }

    #[test]
    fn a_dead_entrys_spilled_pieces_stay_dead_and_gather_by_their_entry() {
        // tests/serving/spill_dead_pieces_stay_dead: pieces of one dead
        // entry gather in one dead entry (released at the latest piece),
        // apart from the session's live entry and from another dead one's.
        let mut c: Cache<()> = Cache::new();
        c.add_piece(0, (), 2.0, 1.0);
        c.add_dead_piece((0, 7), 0, (), 2.0, 1.5);
        c.add_dead_piece((0, 7), 0, (), 2.0, 3.0);
        c.add_dead_piece((0, 9), 0, (), 2.0, 3.0);
        assert_eq!((c.live_units(0), c.total(), c.len()), (2.0, 8.0, 3));
        let gathered: Vec<(f64, f64, bool)> =
            c.entries().map(|e| (e.units, e.released, e.dead)).collect();
        assert_eq!(
            gathered,
            [(2.0, 1.0, false), (4.0, 3.0, true), (2.0, 3.0, true)]
        );
        // The gathering entry moved in release order but kept its identity,
        // by which a next pool of the chain gathers its own pieces.
        let ids: Vec<u64> = c.entries().map(|e| e.id).collect();
        assert_eq!(ids, [0, 1, 3]);
        // Consuming the live entry leaves the dead ones; once one is evicted
        // whole, a later piece of its entry starts a new dead entry.
        assert_eq!(c.consume(0, f64::INFINITY, Block::new(None), no_owner), 2.0);
        let evicted = c.evict_lru(room(10.0, 0.0, 5.0), Block::new(None), |_, _| {});
        assert_eq!((evicted.entries, evicted.units), (1, 4.0));
        c.add_dead_piece((0, 7), 0, (), 1.0, 4.0);
        assert_eq!((c.total(), c.len()), (3.0, 2));
    }

    #[test]
    fn keyed_eviction_reads_every_key_again_before_each_block() {
        // tests/serving/evict_by_keys_per_block: evict by (-size), block 2,
        // entries 8 and 6; 6 units go: 8 -> 6, then the tie goes to the
        // earlier release (-> 4), then the other 6 -> 4.
        let mut c: Cache<()> = Cache::new();
        c.store(0, (), 8.0, 0.5);
        c.store(1, (), 6.0, 0.6);
        let evicted = c.evict_by(
            room(20.0, 0.0, 12.0),
            Block::new(Some(2.0)),
            |e, key| key.push(-e.units),
            |_, _| {},
        );
        assert_eq!(evicted.units, 6.0);
        assert_eq!((c.live_units(0), c.live_units(1)), (4.0, 4.0));
    }

    #[test]
    fn every_piece_is_handed_over_for_a_spill() {
        // tests/serving/spill_block_pieces: 6 and 2 in block 2, all evicted:
        // four pieces of 2, the first three from session 0.
        let mut c: Cache<()> = Cache::new();
        c.store(0, (), 6.0, 0.5);
        c.store(1, (), 2.0, 0.6);
        let mut pieces = Vec::new();
        let evicted = c.evict_lru(room(10.0, 0.0, 10.0), Block::new(Some(2.0)), |e, p| {
            pieces.push((e.session, p))
        });
        assert_eq!(pieces, vec![(0, 2.0), (0, 2.0), (0, 2.0), (1, 2.0)]);
        assert_eq!(
            evicted,
            Evicted {
                entries: 2,
                units: 8.0
            }
        );
    }

    #[test]
    fn a_spilled_piece_joins_the_live_entry_and_moves_it_to_the_end() {
        let mut c: Cache<()> = Cache::new();
        c.add_piece(0, (), 2.0, 1.0);
        c.store(1, (), 3.0, 1.5);
        c.add_piece(0, (), 2.0, 2.0);
        assert_eq!(c.live_units(0), 4.0);
        let first: Vec<u64> = c.entries().map(|e| e.session).collect();
        assert_eq!(first, vec![1, 0]);
        assert_eq!(c.entries().last().map(|e| e.released), Some(2.0));
    }

    #[test]
    fn eviction_stops_within_the_slack() {
        // pyserq 0.1.0: block 0.1, an entry of 0.6000000000000001 loses one
        // block to make room for 0.5 in cap 1: 0.5000000000000001 + 0.5 is
        // within cap + 1e-9.
        let mut c: Cache<()> = Cache::new();
        c.store(0, (), 0.6000000000000001, 1.0);
        c.evict_lru(room(1.0, 0.0, 0.5), Block::new(Some(0.1)), |_, _| {});
        assert_eq!(c.live_units(0), 0.5000000000000001);
    }
}
