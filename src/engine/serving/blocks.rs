//! A pool's `block` (spec §8.3): allocations and growths round up to
//! whole blocks, cache entries round down, eviction takes a block at a
//! time.
//!
//! Invariant: the rounding is `ceil(x / b) * b` and `floor(x / b) * b` in
//! floating point, as the reference computes it, so with `block 0.1` a
//! hold of 0.3 takes 0.30000000000000004 (0.3 / 0.1 is
//! 2.9999999999999996) and `cache (0.3)` keeps 0.2.

/// A pool's block size, or none (units are kept as they are).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Block(Option<f64>);

impl Block {
    /// The block of a pool declared with `block b` (`Some(b)`, b > 0, as
    /// the validator checks) or without (`None`).
    pub fn new(block: Option<f64>) -> Block {
        Block(block)
    }

    /// The size, if the pool has one.
    pub fn size(self) -> Option<f64> {
        self.0
    }

    /// `x` rounded up to whole blocks: an allocation or a growth's total.
    pub fn up(self, x: f64) -> f64 {
        match self.0 {
            Some(b) => (x / b).ceil() * b,
            None => x,
        }
    }

    /// `x` rounded down to whole blocks: a cache entry, a `reuse` limit.
    pub fn down(self, x: f64) -> f64 {
        match self.0 {
            Some(b) => (x / b).floor() * b,
            None => x,
        }
    }

    /// What one eviction step takes from an entry of `units`: a block (or
    /// what is left of the entry, if less), or the whole entry without
    /// blocks (an entry of 3 goes whole to make room for 1 unit).
    pub fn piece(self, units: f64) -> f64 {
        match self.0 {
            Some(b) => b.min(units),
            None => units,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Block;

    #[test]
    fn whole_blocks_round_up_for_allocations_and_down_for_entries() {
        // spec §8.3: hold 10 in block 4 takes 12, cache (7) keeps 4;
        // block 2.5 turns 3 into 5 and keeps 2.5 of 4.9.
        let four = Block::new(Some(4.0));
        assert_eq!((four.up(10.0), four.down(7.0)), (12.0, 4.0));
        let fractional = Block::new(Some(2.5));
        assert_eq!((fractional.up(3.0), fractional.down(4.9)), (5.0, 2.5));
        let none = Block::new(None);
        assert_eq!((none.up(3.3), none.down(3.3)), (3.3, 3.3));
    }

    #[test]
    fn rounding_is_computed_in_floating_point_as_the_reference_does() {
        // pyserq 0.1.0 (tests/serving/grow_block_rounding_floats): with
        // block 0.1, hold 0.3 holds 0.30000000000000004 and cache (0.3)
        // keeps 0.2; 0.30000000000000004 rounds up to 0.4.
        let b = Block::new(Some(0.1));
        assert_eq!(b.up(0.3), 0.30000000000000004);
        assert_eq!(b.down(0.3), 0.2);
        assert_eq!(b.up(0.30000000000000004), 0.4);
        assert_eq!(b.down(0.7), 0.6000000000000001);
    }

    #[test]
    fn an_eviction_piece_is_a_block_or_the_whole_entry() {
        assert_eq!(Block::new(Some(2.0)).piece(6.0), 2.0);
        assert_eq!(Block::new(Some(2.0)).piece(1.5), 1.5);
        assert_eq!(Block::new(None).piece(3.0), 3.0);
    }

    #[test]
    fn infinite_limits_stay_infinite() {
        // A hold without `reuse` consumes its whole entry: the limit is inf.
        assert_eq!(Block::new(Some(16.0)).down(f64::INFINITY), f64::INFINITY);
        assert_eq!(Block::new(Some(16.0)).up(0.0), 0.0);
    }
}
