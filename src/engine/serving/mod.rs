//! The serving engine's pure parts (spec §8): blocks, a pool member's
//! cache, an iteration's hand-out of tokens, serve orders, a hold's
//! position and growth, preemption's victim and `stuck`, and the
//! online estimators.
//!
//! Architecture invariant: nothing here knows the world, the event heap,
//! sessions' statements or the IR's expressions. Each part takes plain
//! numbers (and closures where a key must be read at its moment) and
//! returns plain numbers, so the engine's components hold these types and
//! its systems (`iterate`, `admit`, `end_hold`, …) call them. Every
//! behaviour here was pinned on pyserq 0.1.0; docs/serving-engine.md says
//! why each is so, with worked examples.

pub mod blocks;
pub mod estimators;
pub mod iteration;
pub mod order;
pub mod position;
pub mod prefix_cache;
pub mod victim;

/// The slack of the reference's comparisons of units and tokens, in
/// absolute terms: a hold, a grow or a growth fits when `used + need ≤
/// cap + EPS`; eviction stops when `used + cached + need ≤ cap + EPS`; a
/// run on a step stage is done when at most `EPS` tokens remain; a
/// growing run's hold grows only when its position passes the allocation
/// by more than `EPS`. A rejection (units above the capacity) compares
/// strictly. Measured on pyserq 0.1.0: an excess of 1.0e-9 fits, 1.01e-9
/// does not, at capacities 1 and 1000 alike.
pub const EPS: f64 = 1e-9;
