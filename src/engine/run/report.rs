//! `fill_report`: the batch system that fills the report at the end of a
//! run from the stages', pools' and sessions' figures.
//!
//! Architecture invariant: runs once, after the last event; reads only.

use bevy_ecs::prelude::*;
use bevy_ecs::system::SystemParam;

use crate::engine::data::code::Code;
use crate::engine::data::events::EventQueue;
use crate::engine::data::flow_entity::Flows;
use crate::engine::data::kv::KvPools;
use crate::engine::data::pool::PoolStats;
use crate::engine::data::resources::{Census, Members, Observed};
use crate::engine::data::stage::{Service, StageStats};
use crate::report::{Observation, PoolRow, Report, StageRow};

/// When the run ended (the horizon, or the `arrivals` drain).
#[derive(Resource, Clone, Copy, Debug)]
pub struct End(pub f64);

/// The report, once filled.
#[derive(Resource, Default)]
pub struct Output(pub Option<Report>);

/// Each entry's index in its family (a run of equal names, as the IR
/// flattens `x[N]`), or `None` in a family of one.
pub fn families<'n>(names: impl Iterator<Item = &'n str>) -> Vec<Option<usize>> {
    let names: Vec<&str> = names.collect();
    let mut out = vec![None; names.len()];
    let mut start = 0;
    while start < names.len() {
        let end = start
            + names[start..]
                .iter()
                .take_while(|&&n| n == names[start])
                .count();
        if end - start > 1 {
            for (k, slot) in out[start..end].iter_mut().enumerate() {
                *slot = Some(k);
            }
        }
        start = end;
    }
    out
}

/// The run's figures, as [`fill_report`] reads them at the run's end.
#[derive(SystemParam)]
pub struct Figures<'w, 's> {
    code: Res<'w, Code>,
    end: Res<'w, End>,
    events: Res<'w, EventQueue>,
    census: Res<'w, Census>,
    members: Res<'w, Members>,
    flows: Res<'w, Flows>,
    stages: Query<'w, 's, (&'static Service, &'static StageStats)>,
    pools: Query<'w, 's, &'static PoolStats>,
    kv: Res<'w, KvPools>,
}

/// Fills [`Output`] from the run's figures. Runs once, at the run's end:
/// the samples move into the report (a long run's are megabytes).
pub fn fill_report(figures: Figures, mut observed: ResMut<Observed>, mut out: ResMut<Output>) {
    let prog = &figures.code.program;
    let samples = std::mem::take(&mut observed.samples);
    let end = figures.end.0;
    let census = &figures.census;
    out.0 = Some(Report {
        source_name: String::new(),
        horizon: prog.horizon,
        end,
        warmup: prog.warmup,
        seed: prog.seed,
        events: figures.events.taken,
        arrivals: census.next_serial,
        ended: census.ended,
        turns: observed.turns,
        mean_live: census.live_avg.mean(end),
        live_series: census.live_series.means(end),
        stage_series: figures.stage_series(),
        pool_series: figures.pool_series(),
        observes: prog
            .observes
            .iter()
            .zip(samples.into_iter().zip(&observed.moments))
            .enumerate()
            .map(|(i, (name, (samples, &moments)))| Observation {
                name: name.clone(),
                samples,
                moments,
                provenance: observed.provenance.as_ref().and_then(|p| p.get(i).cloned()),
            })
            .collect(),
        stages: figures.stage_rows(),
        pools: figures.pool_rows(),
        turn_marks: observed.marks.take(),
        negative_amounts: observed.negative_amounts.take().map(|mut n| {
            let (b, i) = n.statement.at;
            n.statement.line = prog
                .positions
                .as_ref()
                .and_then(|p| p.get(b)?.get(i))
                .map(|p| p.line);
            n
        }),
    });
}

impl Figures<'_, '_> {
    /// Each stage member's jobs present, by window: the stability test's
    /// series (docs/report.md §2.1).
    fn stage_series(&self) -> Vec<Vec<f64>> {
        let end = self.end.0;
        self.members
            .stages
            .iter()
            .filter_map(|&e| Some(self.stages.get(e).ok()?.1.present_series.means(end)))
            .collect()
    }

    /// Each pool member's queue, by window (the same test's).
    fn pool_series(&self) -> Vec<Vec<f64>> {
        let end = self.end.0;
        self.members
            .pools
            .iter()
            .filter_map(|&e| Some(self.pools.get(e).ok()?.queue_series.means(end)))
            .collect()
    }

    /// Every stage member's row.
    fn stage_rows(&self) -> Vec<StageRow> {
        let prog = &self.code.program;
        let end = self.end.0;
        let span = end - prog.warmup;
        let stage_members = families(prog.stages.iter().map(|s| s.name.as_str()));
        self.members
            .stages
            .iter()
            .enumerate()
            .filter_map(|(i, &e)| {
                let (service, s) = self.stages.get(e).ok()?;
                let iterations = match service {
                    Service::Step(engine) => engine.iterations,
                    _ => 0,
                };
                // A shared stage's utilisation is the flow system's.
                let util = if service.is_shared() {
                    &self.flows.util[i]
                } else {
                    &s.util
                };
                Some(StageRow {
                    name: prog.stages[i].name.clone(),
                    member: stage_members[i],
                    mean_number: s.number.mean(end),
                    utilization: Some(util.mean(end)).filter(|u| !u.is_nan()),
                    completed: s.completed,
                    throughput: s.completed as f64 / span,
                    mean_wait: s.wait.mean(),
                    mean_service: s.service_time.mean(),
                    iterations,
                })
            })
            .collect()
    }

    /// Every pool member's row.
    fn pool_rows(&self) -> Vec<PoolRow> {
        let prog = &self.code.program;
        let end = self.end.0;
        let pool_members = families(prog.pools.iter().map(|p| p.name.as_str()));
        self.members
            .pools
            .iter()
            .enumerate()
            .filter_map(|(i, &e)| {
                let p = self.pools.get(e).ok()?;
                let f = &self.kv.figures[i];
                Some(PoolRow {
                    name: prog.pools[i].name.clone(),
                    member: pool_members[i],
                    mean_used: p.used_avg.mean(end),
                    mean_cached: f.cached_avg.mean(end),
                    mean_queue: p.queue_avg.mean(end),
                    mean_holders: p.holders_avg.mean(end),
                    mean_wait: p.wait.mean(),
                    admissions: p.admissions,
                    evicted_entries: f.evicted_entries,
                    evicted_units: f.evicted_units,
                    preemptions: f.preemptions,
                    spills: f.spills,
                    rejected: p.rejected,
                    stuck: f.stuck,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::families;

    #[test]
    fn families_are_runs_of_equal_names() {
        let got = families(["a", "x", "x", "x", "b", "y", "y"].into_iter());
        assert_eq!(
            got,
            [None, Some(0), Some(1), Some(2), None, Some(0), Some(1)]
        );
    }
}
