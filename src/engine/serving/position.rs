//! A hold's position on its pools (spec §8.2, §8.4): where its computed
//! prefix reaches, how a growing run grows the allocation, and what the
//! hold caches when it is released.
//!
//! Invariants: a position starts at the cached prefix consumed at
//! admission and only grows (growing tokens, `load`, a stalled growth's
//! grant); the allocation covers the position after every granted growth;
//! a hold has one flag, set by its first growing token or `load`, and the
//! flag (not the pool) decides whether a pool caches its position or its
//! allocation.

use super::EPS;
use super::blocks::Block;

/// The new allocation a growing run needs to reach `target` (its position
/// after this iteration's tokens), or `None` when the allocation already
/// covers it (within [`EPS`]): the target rounded up to whole blocks.
/// A `grow p (d)` asks for `allocation + d` the same way.
pub fn grown_allocation(allocation: f64, target: f64, block: Block) -> Option<f64> {
    (target > allocation + EPS).then(|| block.up(target))
}

/// What a hold's release caches in one pool: `min(ℓ, computed)` rounded
/// down to the block, where computed is the pool's position if the hold
/// ran growing tokens or a `load` (`ran`), else its allocation; nothing
/// for a negative amount (a NaN `ℓ` is ignored by `min`, as in `f64::min`).
pub fn cached_units(cache: f64, ran: bool, position: f64, allocation: f64, block: Block) -> f64 {
    let computed = if ran { position } else { allocation };
    let units = block.down(cache.min(computed));
    if units > 0.0 { units } else { 0.0 }
}

/// A stalled growth (under `preempt none`) and what its grant does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StalledGrowth {
    /// The allocation the growth asks for (rounded up to the block).
    pub allocation: f64,
    /// What the growth asked beyond the old allocation, unrounded: 0.1.0
    /// advances the hold's position by this much when the growth is
    /// granted, and the next iteration grows again for the tokens (the
    /// hold ends larger than its tokens; spec §8.3).
    pub asked: f64,
}

impl StalledGrowth {
    /// The growth of a resident at `position` with `allocation` that was
    /// to take `tokens`, or `None` if none is needed.
    pub fn of(allocation: f64, position: f64, tokens: f64, block: Block) -> Option<StalledGrowth> {
        let target = position + tokens;
        grown_allocation(allocation, target, block).map(|new| StalledGrowth {
            allocation: new,
            asked: target - allocation,
        })
    }

    /// The position after the grant.
    pub fn granted_position(self, position: f64) -> f64 {
        position + self.asked
    }
}

#[cfg(test)]
mod tests {
    use super::{Block, StalledGrowth, cached_units, grown_allocation};

    #[test]
    fn growth_rounds_the_target_up_to_whole_blocks() {
        // t2_growing_block: hold p (1) in block 4 takes 4; prefill 10 growing
        // (positions 4, 8, 10) makes 4, 8, 12; block 2.5: 2.5, 10, 15.
        let four = Block::new(Some(4.0));
        assert_eq!(grown_allocation(4.0, 4.0, four), None);
        assert_eq!(grown_allocation(4.0, 8.0, four), Some(8.0));
        assert_eq!(grown_allocation(8.0, 10.0, four), Some(12.0));
        assert_eq!(grown_allocation(12.0, 13.0, four), Some(16.0));
        let fractional = Block::new(Some(2.5));
        assert_eq!(grown_allocation(2.5, 10.0, fractional), Some(10.0));
        assert_eq!(grown_allocation(12.5, 13.0, fractional), Some(15.0));
    }

    #[test]
    fn a_position_within_the_slack_of_the_allocation_needs_no_growth() {
        // pyserq 0.1.0: a hold of 0.3 whose growing position reaches
        // 0.1 + 0.1 + 0.1 = 0.30000000000000004 stays at 0.3.
        assert_eq!(
            grown_allocation(0.3, 0.30000000000000004, Block::new(None)),
            None
        );
        assert_eq!(
            grown_allocation(0.5, 0.5 + 1e-12, Block::new(Some(0.5))),
            None
        );
    }

    #[test]
    fn a_release_caches_the_position_only_if_the_hold_ran_growing_or_load() {
        // t2_cache_position: block 2; a hold of 10 prefilling 5 growing
        // caches 4; a hold of 6 after `load kv (3)` caches 2; a hold of 6
        // that ran neither caches its allocation, 6.
        let two = Block::new(Some(2.0));
        assert_eq!(cached_units(100.0, true, 5.0, 10.0, two), 4.0);
        assert_eq!(cached_units(100.0, true, 3.0, 6.0, two), 2.0);
        assert_eq!(cached_units(100.0, false, 0.0, 6.0, two), 6.0);
        // tests/serving/preempt_multi_pool_hold: the request-cap pool of a
        // hold that grew KV caches its own position, 0.
        assert_eq!(cached_units(100.0, true, 0.0, 1.0, Block::new(None)), 0.0);
        // A negative cache clause keeps nothing; `min` ignores a NaN one.
        assert_eq!(cached_units(-1.0, false, 0.0, 6.0, two), 0.0);
        assert_eq!(
            cached_units(f64::NAN, false, 0.0, 6.0, Block::new(None)),
            6.0
        );
    }

    #[test]
    fn a_stalled_growths_grant_advances_the_position_by_what_it_asked() {
        // tests/serving/grow_stall_grant_advances_position: block 4, a hold of
        // 4 prefilling 6 asks for 8 (2 beyond 4): granted, the position is 2,
        // and 2 + 6 = 8 needs no more.
        let four = Block::new(Some(4.0));
        let stalled = StalledGrowth::of(4.0, 0.0, 6.0, four).expect("6 > 4 needs a growth");
        assert_eq!(
            stalled,
            StalledGrowth {
                allocation: 8.0,
                asked: 2.0
            }
        );
        let position = stalled.granted_position(0.0);
        assert_eq!(
            grown_allocation(stalled.allocation, position + 6.0, four),
            None
        );
        // t2_preempt_none_growing: position 4, 2 tokens left, allocation 4:
        // asks 6, granted: position 6, the next iteration grows to 8.
        let stalled = StalledGrowth::of(4.0, 4.0, 2.0, Block::new(None)).expect("needs 2 more");
        assert_eq!(stalled.granted_position(4.0), 6.0);
        assert_eq!(grown_allocation(6.0, 8.0, Block::new(None)), Some(8.0));
    }
}
