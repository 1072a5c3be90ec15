//! The plan as a user reads it: one line per run (profiler step), and under
//! a kernel-replay run one line per pass, so a user sees before running
//! which step collects what and in which order a dispatch's passes go.
use crate::fold::{Plan, Run, RunCollection};
use crate::job::{RunOptions, ThreadTrace};
use crate::plan::PassKind;
use crate::schema::JobReplayMode;
use std::fmt;

fn thread_trace(t: &ThreadTrace) -> String {
    format!(
        "thread trace (target_cu {}, shader_engine_mask {:#x}, simd_select {:#x}, buffer_size {:#x}, serialize_all {}, perfcounter_ctrl {:#x})",
        t.target_cu, t.shader_engine_mask, t.simd_select, t.buffer_size, t.serialize_all, t.perfcounter_ctrl
    )
}

fn counters(group: &[String]) -> String {
    format!("counters {}", group.join(", "))
}

fn jobs(run: &Run) -> String {
    match run.jobs.as_slice() {
        [] => "command line".to_string(),
        [one] => format!("job {one}"),
        many => format!(
            "jobs {}",
            many.iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The options a run sets, `name value` each; empty when none.
fn options(o: &RunOptions) -> Vec<String> {
    let mut v = Vec::new();
    let mut one = |name: &str, value: &Option<String>| {
        if let Some(value) = value {
            v.push(format!("{name} {value:?}"));
        }
    };
    one("kernel_include_regex", &o.kernel_include_regex);
    one("kernel_exclude_regex", &o.kernel_exclude_regex);
    one("output_directory", &o.output_directory);
    one("output_file", &o.output_file);
    if let Some(range) = &o.kernel_iteration_range {
        v.push(format!("kernel_iteration_range {range}"));
    }
    let mut list = |name: &str, values: &[String]| {
        if !values.is_empty() {
            v.push(format!("{name} {values:?}"));
        }
    };
    list("output_format", &o.output_format);
    list("att_library_path", &o.att_library_path);
    if o.keep_dimensions {
        v.push("pmc_keep_dimensions".to_string());
    }
    v
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mode = match self.mode {
            JobReplayMode::Application => "application: each job is a profiler step of its own",
            JobReplayMode::Kernel => "kernel: the jobs are the passes of one kernel-replay run",
        };
        writeln!(f, "job_replay_mode {mode}; {} run(s)", self.runs.len())?;
        for (i, run) in self.runs.iter().enumerate() {
            write!(f, "run {i} ({}): ", jobs(run))?;
            match &run.collection {
                RunCollection::Counters(g) => writeln!(f, "{}", counters(g))?,
                RunCollection::ThreadTrace(t) => writeln!(f, "{}", thread_trace(t))?,
                RunCollection::Replay(replay) => {
                    let layout = replay.layout();
                    writeln!(
                        f,
                        "kernel replay, {} passes per selected dispatch",
                        layout.total_passes()
                    )?;
                    for pass in 0..layout.total_passes() {
                        let what = match layout.pass(pass).expect("within total_passes") {
                            PassKind::Counters(g) => counters(&replay.groups()[g as usize]),
                            PassKind::ThreadTrace => {
                                thread_trace(replay.thread_trace().expect("the layout traces"))
                            }
                        };
                        writeln!(f, "  pass {pass}: {what}")?;
                    }
                }
            }
            let set = options(&run.options);
            if !set.is_empty() {
                writeln!(f, "  options: {}", set.join(", "))?;
            }
        }
        Ok(())
    }
}
