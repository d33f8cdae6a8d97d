//! The evaluation layer: compiled expressions evaluated over a read-only
//! view, and [`sim::Sim`], the systems' shared view of the world.

pub mod evaluate;
pub mod record;
pub mod sim;
