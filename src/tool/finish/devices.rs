//! GPUs as kineto lanes: agent handle -> device index + name. Filled from
//! the SDK's agents (tool/sdk/agents.rs); read when a window is finished.
use activity_store::FastMap;

#[derive(Clone, Debug, Default)]
pub struct Devices {
    /// Looked up once per record when a window is finished.
    by_agent: FastMap<u64, (u32, String)>,
}

impl Devices {
    pub fn insert(&mut self, agent: u64, index: u32, name: String) {
        self.by_agent.insert(agent, (index, name));
    }

    pub fn is_empty(&self) -> bool {
        self.by_agent.is_empty()
    }

    pub fn knows(&self, agent: u64) -> bool {
        self.by_agent.contains_key(&agent)
    }

    /// The device index of an agent; unknown agents get index 0.
    pub fn index_of(&self, agent: u64) -> u32 {
        self.by_agent.get(&agent).map_or(0, |(index, _)| *index)
    }

    /// Every GPU's agent handle.
    pub fn agents(&self) -> Vec<u64> {
        let mut agents: Vec<u64> = self.by_agent.keys().copied().collect();
        agents.sort_unstable();
        agents
    }

    /// (device index, name), sorted by index.
    pub fn lanes(&self) -> Vec<(u32, String)> {
        let mut lanes: Vec<(u32, String)> = self.by_agent.values().cloned().collect();
        lanes.sort();
        lanes.dedup();
        lanes
    }
}
