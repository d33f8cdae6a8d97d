//! The systems, one file per domain event (an arrival, a statement, a
//! job's or a flow's end, an admission pass, an iteration), and the
//! serving concerns they share (budgets, caching, preemption).

pub mod admit;
pub mod arrive;
pub mod budget;
pub mod caching;
pub mod end_flow;
pub mod end_job;
pub mod end_lease;
pub mod end_session;
pub mod hold;
pub mod issue_completions;
pub mod iterate;
pub mod preempt;
pub mod run_job;
pub mod settle;
pub mod step_session;
