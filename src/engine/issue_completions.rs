//! `issue_completions`: at the end of a settle, the ps stages whose job
//! set changed get their one finish event anew, in declaration order, then
//! the flow system its one event if any flow started or ended (spec §6.2,
//! §6.4).
//!
//! Invariant: a ps stage's capacity is evaluated here with `present` = its
//! jobs, drawing from the machine's stream, once per issue.

use super::code::Code;
use super::eval::{Cx, eval};
use super::events::EventKind;
use super::interface::RunError;
use super::sim::{Sim, lost, stage_work};
use super::stage::issue_ps_finish;

/// Issues the finish events the settle changed.
pub fn issue_completions(code: &Code, sim: &mut Sim) -> Result<(), RunError> {
    let now = sim.clock.now;
    if !sim.dirty.list.is_empty() {
        sim.dirty.list.sort_unstable();
        for i in 0..sim.dirty.list.len() {
            let s = sim.dirty.list[i] as usize;
            sim.dirty.marked[s] = false;
            let entity = sim.members.stages[s];
            let present = match sim.store.stages.get(entity) {
                Ok((service, _)) => service.ps_present(),
                Err(_) => return Err(lost("stage", now)),
            };
            let phi = if present == 0 {
                0.0
            } else {
                let Some(capacity) = &code.capacity[s] else {
                    continue;
                };
                let phi = {
                    let Sim {
                        streams,
                        load,
                        levels,
                        flows,
                        members,
                        store,
                        ..
                    } = &mut *sim;
                    let stages = &store.stages;
                    let work = |s: usize| stage_work(stages, members, &flows.system, s, now);
                    let streams = &mut **streams;
                    let mut cx = Cx {
                        now,
                        present: present as f64,
                        attrs: &[],
                        rng: &mut streams.machine,
                        first: &mut streams.first,
                        load,
                        levels,
                        work: &work,
                    };
                    eval(capacity, &mut cx)
                };
                phi.map_err(|m| {
                    sim.error(format!(
                        "stage `{}`: capacity: {m}",
                        code.program.stages[s].name
                    ))
                })?
            };
            let Ok((mut service, _)) = sim.store.stages.get_mut(entity) else {
                return Err(lost("stage", now));
            };
            issue_ps_finish(&mut service, s, now, phi, &mut sim.events);
        }
        sim.dirty.list.clear();
    }
    if sim.flows.changed {
        let flows = &mut *sim.flows;
        flows.changed = false;
        flows.system.solve(now);
        for &s in flows.system.changed_stages() {
            let Ok((service, mut stats)) = sim.store.stages.get_mut(sim.members.stages[s as usize])
            else {
                return Err(lost("stage", now));
            };
            let phi = service.shared_capacity().unwrap_or(f64::NAN);
            stats.util.set(now, flows.system.load(s) / phi);
        }
        flows.generation += 1;
        flows.pending = None;
        if let Some((time, id)) = flows.system.next_end() {
            flows.pending = Some(id);
            sim.events
                .schedule(time.max(now), EventKind::FlowEnd(flows.generation));
        }
    }
    Ok(())
}
