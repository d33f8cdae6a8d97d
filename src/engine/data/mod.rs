//! The data layer: every component and resource of the world, and the
//! compiled program. Nothing here handles an event or evaluates an
//! expression; each file owns one domain's state.

pub mod code;
pub mod events;
pub mod flow_entity;
pub mod kv;
pub mod min_heap;
pub mod pool;
pub mod replay;
pub mod residents;
pub mod resources;
pub mod rng;
pub mod session;
pub mod stage;
pub mod stats;
pub mod traffic;
