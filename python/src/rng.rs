//! `Rng`: one of serq's random streams (`serq::engine::rng`), so a Python
//! check can reproduce the uniform draws a run takes.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use serq::engine::rng::{FirstDraws, Purpose, Stream};

/// `Rng(seed, stream="arrivals", serial=0, turn=0)`: the random stream a
/// run seeded `seed` draws from for one purpose (ChaCha8 keyed by the seed
/// and the purpose):
///
/// - `"arrivals"`: Poisson gaps and renewal gap expressions;
/// - `"machine"`: `ps` capacity expressions;
/// - `"session"`: the statements of the session numbered `serial`;
/// - `"turn"`: the `init` block (`turn=0`) or `turn` block number `turn` of
///   session `serial`.
///
/// `random_f64()` is the stream's next uniform draw in [0, 1); the engine
/// turns draws into variates by inversion (`~exp(m)` is `-m·ln(1 - u)`).
/// Unlike pyserq's `Rng` (rand's `StdRng`), this is serq's own generator.
#[pyclass(module = "serq._serq")]
pub struct Rng {
    stream: Stream,
    /// What the stream is for: given at each draw, as the engine does.
    purpose: Purpose,
    first: FirstDraws,
}

#[pymethods]
impl Rng {
    #[new]
    #[pyo3(signature = (seed, stream="arrivals", serial=0, turn=0))]
    fn new(seed: u64, stream: &str, serial: u64, turn: u64) -> PyResult<Rng> {
        let purpose = match stream {
            "arrivals" => Purpose::Arrivals,
            "machine" => Purpose::Machine,
            "session" => Purpose::Session(serial),
            "turn" => Purpose::Turn { serial, turn },
            other => {
                return Err(PyValueError::new_err(format!(
                    "no stream `{other}`: a stream is \"arrivals\", \"machine\", \"session\" or \"turn\""
                )));
            }
        };
        Ok(Rng {
            stream: Stream::new(),
            purpose,
            first: FirstDraws::new(seed),
        })
    }

    /// The stream's next uniform draw, in [0, 1).
    fn random_f64(&mut self) -> f64 {
        self.stream.uniform(self.purpose, &mut self.first)
    }
}
