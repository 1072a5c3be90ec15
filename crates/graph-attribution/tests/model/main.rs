//! A model of ROCm's submission (threads, shared hardware queues, doorbells
//! rung by whoever comes next, graph branches on several queues, copy-engine
//! copies) that produces each trace window's evidence exactly as the tool
//! would see it, with the truth of every record; the evidence method's
//! answers are held to that truth.
//!
//! - `sim`: the model, steppable by hand or by a seeded random scheduler;
//! - `gen`: random programs; `random`: many random scenarios per class;
//! - `hazards`: one small hand-scheduled scenario per hazard and rule.

mod check;
mod gen;
mod hazards;
mod random;
mod rng;
mod sim;
