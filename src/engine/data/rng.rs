//! Random streams (ChaCha8), derived from the seed.
//!
//! Invariant: a stream is a pure function of (seed, what it is for), never of
//! the order in which streams are created or of what other streams drew, so
//! two deployments run on one seed see the same workload (common random
//! numbers): one stream for arrivals, one for the machine's draws (ps
//! capacities), one per session for its statements, one per (session, turn)
//! for the `init`/`turn` blocks.
//!
//! Cost: a ChaCha refill makes 64 words at once, and most sessions draw
//! only a few numbers, so a fresh generator per session spent ~45% of an
//! M/M/1 run in building and refilling generators. A per-session stream
//! therefore takes its first [`FIRST`] draws from a block shared by
//! [`PER_BLOCK`] consecutive serials (ChaCha8 under a key of its own,
//! stream = serial / PER_BLOCK, cached in [`FirstDraws`]), and only builds
//! its own generator for the draws after those. Both parts are functions of
//! (seed, purpose, draw number) alone, so the invariant holds.

use bevy_ecs::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Draws of a per-session stream served from the shared blocks.
pub const FIRST: u64 = 4;
/// Serials sharing one block (64 words = PER_BLOCK × FIRST × 2 words).
pub const PER_BLOCK: u64 = 8;
/// Blocks kept in the cache (direct-mapped).
const CACHED: usize = 8;

/// What a stream is for: the ChaCha key is derived from the seed and this.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// Poisson gaps and renewal gap expressions.
    Arrivals,
    /// ps capacity expressions.
    Machine,
    /// A session's statements.
    Session(u64),
    /// The choice of each session's corpus session in an unordered trace.
    Trace,
    /// A session's `init` (turn 0) or `turn` block number `turn`.
    Turn {
        /// The session's serial.
        serial: u64,
        /// The turn number (0 for `init`).
        turn: u64,
    },
}

impl Purpose {
    /// (key domain, stream) of the stream's own generator; the shared
    /// blocks of a per-session purpose use key domain `domain + 1`.
    fn key(self) -> (u64, u64) {
        match self {
            Purpose::Arrivals => (0, 0),
            Purpose::Machine => (0, 1),
            Purpose::Trace => (0, 2),
            Purpose::Session(serial) => (2, serial),
            Purpose::Turn { serial, turn } => (turn.wrapping_mul(2).wrapping_add(4), serial),
        }
    }

    fn is_per_session(self) -> bool {
        matches!(self, Purpose::Session(_) | Purpose::Turn { .. })
    }
}

/// SplitMix64, to spread a (seed, domain) pair over a 32-byte key.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn generator(seed: u64, domain: u64, stream: u64) -> ChaCha8Rng {
    let mut state = seed ^ domain.wrapping_mul(0xd6e8_feb8_6659_fd93);
    let mut key = [0u8; 32];
    for chunk in key.chunks_exact_mut(8) {
        chunk.copy_from_slice(&splitmix(&mut state).to_le_bytes());
    }
    let mut rng = ChaCha8Rng::from_seed(key);
    rng.set_stream(stream);
    rng
}

/// A uniform in [0, 1) from 64 random bits, as rand's `StandardUniform`.
fn unit(bits: u64) -> f64 {
    (bits >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// The shared first-draw blocks, cached by (key domain, block).
#[derive(Clone, Debug)]
pub struct FirstDraws {
    seed: u64,
    tags: [(u64, u64); CACHED],
    words: Box<[[u64; 32]; CACHED]>,
}

impl FirstDraws {
    /// An empty cache for streams of `seed`.
    pub fn new(seed: u64) -> FirstDraws {
        FirstDraws {
            seed,
            tags: [(u64::MAX, u64::MAX); CACHED],
            words: Box::new([[0; 32]; CACHED]),
        }
    }

    /// Draw `i` (< FIRST) of the per-session stream (domain, serial).
    #[inline]
    fn draw(&mut self, domain: u64, serial: u64, i: u64) -> f64 {
        let block = serial / PER_BLOCK;
        let slot = (block.wrapping_add(domain.wrapping_mul(3)) % CACHED as u64) as usize;
        if self.tags[slot] != (domain, block) {
            self.fill(slot, domain, block);
        }
        unit(self.words[slot][((serial % PER_BLOCK) * FIRST + i) as usize])
    }

    /// Cache slot `slot` takes block `block` of key domain `domain`. Out
    /// of line: one draw in `PER_BLOCK × FIRST` or fewer comes here.
    #[inline(never)]
    fn fill(&mut self, slot: usize, domain: u64, block: u64) {
        // One fill of the generator's 64-word buffer: the same words as
        // 32 `next_u64`s (each the little-endian pair of the next two).
        generator(self.seed, domain + 1, block).fill(&mut self.words[slot][..]);
        self.tags[slot] = (domain, block);
    }
}

/// `Stream::drawn` once the stream's own generator is current.
const CURRENT: u32 = u32::MAX;

/// One random stream's state: how far it has drawn, and its own generator
/// once built. What it is for (its [`Purpose`]) and the run's seed (in
/// [`FirstDraws`]) are given at each draw, not kept: a session's purpose
/// is a function of its serial, so 10^7 live sessions carry 16 bytes of
/// stream each.
///
/// Its own generator (320 bytes) is boxed: most sessions never build one,
/// and 10^7 live sessions must not carry it inline. A reset keeps the box
/// (no longer current), so a reused session slot allocates nothing.
#[derive(Clone, Debug, Default)]
pub struct Stream {
    rng: Option<Box<ChaCha8Rng>>,
    /// Draws taken before the own generator became current, or [`CURRENT`].
    drawn: u32,
}

impl Stream {
    /// A stream at its first draw (nothing is computed yet).
    pub fn new() -> Stream {
        Stream::default()
    }

    /// Back to the first draw, for another purpose (the box is kept).
    pub fn reset(&mut self) {
        self.drawn = 0;
    }

    /// A uniform draw in [0, 1) of the stream for `purpose` under the
    /// seed of `first`; the same purpose at every draw of one stream.
    #[inline]
    pub fn uniform(&mut self, purpose: Purpose, first: &mut FirstDraws) -> f64 {
        // Once its own generator is current, every draw comes from it (a
        // per-session stream builds it at draw FIRST, the others at 0):
        // the path of a `choose` over a thousand members.
        if let Some(rng) = self.own_generator() {
            return rng.random::<f64>();
        }
        self.uniform_first(purpose, first)
    }

    /// The stream's own generator once it is current (every later draw is
    /// its next `random::<f64>()`), else `None`: a scan of a thousand draws
    /// takes them from it in a loop of its own.
    #[inline]
    pub fn own_generator(&mut self) -> Option<&mut ChaCha8Rng> {
        if self.drawn == CURRENT {
            self.rng.as_deref_mut()
        } else {
            None
        }
    }

    /// A draw before the stream's own generator is current.
    #[inline(never)]
    fn uniform_first(&mut self, purpose: Purpose, first: &mut FirstDraws) -> f64 {
        let i = u64::from(self.drawn);
        let (domain, stream) = purpose.key();
        if purpose.is_per_session() && i < FIRST {
            self.drawn += 1;
            return first.draw(domain, stream, i);
        }
        self.build(domain, stream, first.seed)
    }

    /// The stream's own generator becomes current (built anew in its box),
    /// and takes the draw. Out of line: once per stream at most.
    #[inline(never)]
    fn build(&mut self, domain: u64, stream: u64, seed: u64) -> f64 {
        let fresh = generator(seed, domain, stream);
        self.drawn = CURRENT;
        let rng = match &mut self.rng {
            Some(rng) => {
                **rng = fresh;
                rng
            }
            None => self.rng.insert(Box::new(fresh)),
        };
        rng.random::<f64>()
    }
}

/// A run-wide stream with what it is for.
#[derive(Clone, Debug)]
pub struct KeyedStream {
    /// What it is for.
    pub purpose: Purpose,
    /// Its state.
    pub stream: Stream,
}

impl KeyedStream {
    fn new(purpose: Purpose) -> KeyedStream {
        KeyedStream {
            purpose,
            stream: Stream::new(),
        }
    }

    /// A uniform draw in [0, 1).
    #[inline]
    pub fn uniform(&mut self, first: &mut FirstDraws) -> f64 {
        self.stream.uniform(self.purpose, first)
    }

    /// Re-targets it to `purpose`, from its first draw.
    pub fn reset(&mut self, purpose: Purpose) {
        self.purpose = purpose;
        self.stream.reset();
    }
}

/// The run's streams that are not a session's own.
#[derive(Resource, Clone, Debug)]
pub struct Streams {
    /// Poisson gaps and renewal gap expressions.
    pub arrival: KeyedStream,
    /// ps capacity expressions.
    pub machine: KeyedStream,
    /// The stream of the `init` or `turn` block running now (re-targeted
    /// for each, so its generator's box is reused).
    pub turn: KeyedStream,
    /// The shared first draws of per-session streams, and the seed.
    pub first: FirstDraws,
    /// Each session's corpus session in an unordered trace.
    pub trace: KeyedStream,
}

impl Streams {
    /// The streams of a run under `seed`.
    pub fn new(seed: u64) -> Streams {
        Streams {
            arrival: KeyedStream::new(Purpose::Arrivals),
            machine: KeyedStream::new(Purpose::Machine),
            turn: KeyedStream::new(Purpose::Machine),
            first: FirstDraws::new(seed),
            trace: KeyedStream::new(Purpose::Trace),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draws(seed: u64, purpose: Purpose, n: usize, first: &mut FirstDraws) -> Vec<f64> {
        assert_eq!(first.seed, seed);
        let mut s = Stream::new();
        (0..n).map(|_| s.uniform(purpose, first)).collect()
    }

    #[test]
    fn a_stream_depends_only_on_seed_and_purpose() {
        let mut cache = FirstDraws::new(7);
        let a = draws(7, Purpose::Session(3), 9, &mut cache);
        // Other streams drawing in between (and evicting the cache) change nothing.
        let _ = draws(7, Purpose::Session(4), 2, &mut cache);
        for k in 0..40 {
            let _ = draws(7, Purpose::Session(100 + 8 * k), 1, &mut cache);
        }
        assert_eq!(a, draws(7, Purpose::Session(3), 9, &mut FirstDraws::new(7)));
        assert_eq!(a, draws(7, Purpose::Session(3), 9, &mut cache));
        let other = draws(7, Purpose::Turn { serial: 3, turn: 0 }, 9, &mut cache);
        assert!(a.iter().zip(&other).all(|(x, y)| x != y));
        let reseeded = draws(8, Purpose::Session(3), 9, &mut FirstDraws::new(8));
        assert!(a.iter().zip(&reseeded).all(|(x, y)| x != y));
    }

    #[test]
    fn neighbouring_sessions_get_different_draws() {
        let mut cache = FirstDraws::new(1);
        let all: Vec<f64> = (0..16)
            .flat_map(|s| draws(1, Purpose::Session(s), 6, &mut cache))
            .collect();
        let mut sorted = all.clone();
        sorted.sort_by(f64::total_cmp);
        sorted.dedup();
        assert_eq!(sorted.len(), all.len());
        assert!(all.iter().all(|u| (0.0..1.0).contains(u)));
    }
}
