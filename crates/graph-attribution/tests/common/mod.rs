//! A contended window built by hand, launch by launch and packet by packet,
//! with the full evidence the verifier's queue rules read: shared by the
//! rule-6 tests (contended.rs) and the taking-turns tests (turns.rs).
#![allow(dead_code)]

use graph_attribution::{
    verify_window, ApiSpan, AttributionId, DispatchKind, DispatchObservation, ExecHandle,
    ExecKnowledge, GraphKey, LaunchEnding, LaunchRecord, LaunchedExec, Ordinal, SdkLaunch,
    VerifiedWindow, WindowEvidence,
};

pub const QUEUE: u64 = 7;

pub fn id(n: u32) -> AttributionId {
    AttributionId::new(n).unwrap()
}

pub fn key(exec: u32, ordinal: u32) -> GraphKey {
    GraphKey::new(id(exec), Ordinal(ordinal))
}

#[derive(Default)]
pub struct Window {
    pub observations: Vec<DispatchObservation>,
    pub launches: Vec<LaunchRecord>,
    pub sdk: Vec<SdkLaunch>,
    pub spans: Vec<ApiSpan>,
    /// `WindowEvidence::dispatches_complete`.
    pub complete: bool,
    /// `WindowEvidence::holder_writes_pending`.
    pub holder_writes_pending: bool,
}

impl Window {
    /// A complete window, the submission model not vouched for.
    pub fn new() -> Window {
        Window {
            complete: true,
            ..Window::default()
        }
    }

    /// A hipGraphLaunch of `exec` (at handle 0x1000 * exec) by `thread`,
    /// ENTER..EXIT, credited `credited` dispatches by the tracker.
    pub fn launch(
        self,
        corr: u64,
        exec: u32,
        thread: u64,
        span: (u64, u64),
        credited: u32,
        kernels: u32,
    ) -> Self {
        self.launch_at(
            ExecHandle(0x1000 * exec as u64),
            corr,
            exec,
            thread,
            span,
            credited,
            kernels,
        )
    }

    /// As [`Window::launch`], for an exec at `handle`.
    #[allow(clippy::too_many_arguments)]
    pub fn launch_at(
        mut self,
        handle: ExecHandle,
        corr: u64,
        exec: u32,
        thread: u64,
        span: (u64, u64),
        credited: u32,
        kernels: u32,
    ) -> Self {
        self.launches.push(LaunchRecord {
            correlation_id: corr,
            attribution: Some(id(exec)),
            exec: LaunchedExec::Sdk {
                graph_exec_id: exec as u64,
                handle,
            },
            thread_id: thread,
            credited_dispatches: credited,
            ending: LaunchEnding::Exited,
        });
        self.sdk.push(SdkLaunch {
            correlation_id: corr,
            queue_id: QUEUE,
            kernel_dispatch_count: kernels,
        });
        self.spans.push(ApiSpan {
            correlation_id: corr,
            thread_id: thread,
            enter_ns: span.0,
            exit_ns: span.1,
        });
        self
    }

    /// Packets written by `thread` inside its call `corr`, in queue order
    /// right after the packets so far, claimed by the tracker as `exec` from
    /// ordinal `first` on.
    pub fn written(self, corr: u64, thread: u64, exec: u32, first: u32, sigs: &[u64]) -> Self {
        let start = 1_000 + self.observations.len() as u64;
        self.written_from(corr, thread, exec, first, sigs, start, 1)
    }

    /// As [`Window::written`], the first packet starting at `start`, the
    /// next ones `spacing` ns apart.
    #[allow(clippy::too_many_arguments)]
    pub fn written_from(
        mut self,
        corr: u64,
        thread: u64,
        exec: u32,
        first: u32,
        sigs: &[u64],
        start: u64,
        spacing: u64,
    ) -> Self {
        for (n, &signature) in sigs.iter().enumerate() {
            self.observations.push(DispatchObservation {
                correlation_id: corr,
                external: key(exec, first + n as u32).pack(),
                signature,
                kind: DispatchKind::Kernel,
                queue_id: QUEUE,
                thread_id: thread,
                start_ns: start + spacing * n as u64,
            });
        }
        self
    }

    pub fn verify(&self, knowledge: &mut ExecKnowledge) -> VerifiedWindow {
        let evidence = WindowEvidence {
            sdk_launches: Some(&self.sdk),
            api_spans: &self.spans,
            dispatches_complete: self.complete,
            holder_writes_pending: self.holder_writes_pending,
            ..WindowEvidence::new(&self.observations, &self.launches)
        };
        verify_window(&evidence, knowledge)
    }
}
