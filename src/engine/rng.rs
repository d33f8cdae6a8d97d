//! Random streams (ChaCha8), derived from the seed.
//!
//! Invariant: a stream is a pure function of (seed, what it is for), never of
//! the order in which streams are created or of what other streams drew, so
//! two deployments run on one seed see the same workload (common random
//! numbers): one stream for arrivals, one for the machine's draws (ps
//! capacities), one per session for its statements, one per (session, turn)
//! for the `init`/`turn` blocks. A stream is built lazily at its first draw,
//! so deterministic programs never pay for one. ChaCha8 rather than 12:
//! a session typically draws a few numbers from a fresh stream, so the
//! block refill dominates a stream's cost (measured: ~27% of an M/M/1 run
//! with ChaCha12).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// What a stream is for: the ChaCha key is derived from the seed and this.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// Poisson gaps and renewal gap expressions (stream 0 of the shared key).
    Arrivals,
    /// ps capacity expressions (stream 1 of the shared key).
    Machine,
    /// A session's statements: stream `serial` of the session key.
    Session(u64),
    /// A session's `init` (turn 0) or `turn` block number `t`: stream
    /// `serial` of the key of turn `t`.
    Turn {
        /// The session's serial.
        serial: u64,
        /// The turn number (0 for `init`).
        turn: u64,
    },
}

/// SplitMix64, to spread a (seed, domain) pair over a 32-byte key.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn key(seed: u64, domain: u64) -> [u8; 32] {
    let mut state = seed ^ domain.wrapping_mul(0xd6e8_feb8_6659_fd93);
    let mut key = [0u8; 32];
    for chunk in key.chunks_exact_mut(8) {
        chunk.copy_from_slice(&splitmix(&mut state).to_le_bytes());
    }
    key
}

/// One random stream, built at its first draw.
#[derive(Clone, Debug)]
pub struct Stream {
    seed: u64,
    purpose: Purpose,
    rng: Option<ChaCha8Rng>,
}

impl Stream {
    /// The stream for `purpose` under `seed` (nothing is computed yet).
    pub fn new(seed: u64, purpose: Purpose) -> Stream {
        Stream {
            seed,
            purpose,
            rng: None,
        }
    }

    /// Re-targets this stream (it is built again at its next draw).
    pub fn reset(&mut self, seed: u64, purpose: Purpose) {
        self.seed = seed;
        self.purpose = purpose;
        self.rng = None;
    }

    /// A uniform draw in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        let (seed, purpose) = (self.seed, self.purpose);
        self.rng
            .get_or_insert_with(|| build(seed, purpose))
            .random::<f64>()
    }
}

fn build(seed: u64, purpose: Purpose) -> ChaCha8Rng {
    let (domain, stream) = match purpose {
        Purpose::Arrivals => (0, 0),
        Purpose::Machine => (0, 1),
        Purpose::Session(serial) => (1, serial),
        Purpose::Turn { serial, turn } => (turn.wrapping_add(2), serial),
    };
    let mut rng = ChaCha8Rng::from_seed(key(seed, domain));
    rng.set_stream(stream);
    rng
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_depends_only_on_seed_and_purpose() {
        let mut a = Stream::new(7, Purpose::Session(3));
        let mut other = Stream::new(7, Purpose::Session(4));
        let _ = other.uniform();
        let mut b = Stream::new(7, Purpose::Session(3));
        let xs: Vec<f64> = (0..4).map(|_| a.uniform()).collect();
        let ys: Vec<f64> = (0..4).map(|_| b.uniform()).collect();
        assert_eq!(xs, ys);
        assert_ne!(
            xs[0],
            Stream::new(7, Purpose::Turn { serial: 3, turn: 0 }).uniform()
        );
        assert_ne!(xs[0], Stream::new(8, Purpose::Session(3)).uniform());
    }
}
