//! What the rules assume about the real stack beyond the two-hop rule, each
//! under a name a user can withdraw (docs/attribution.md, "Settings").
//!
//! Every assumption here is what the public sources of HIP, ROCr and
//! rocprofiler-sdk say; none can be checked from inside a trace. A user who
//! runs a stack where one does not hold (a patched runtime, a device whose
//! timestamps are known to be unreliable) withdraws it, and the rules that
//! rest on it stand down: fewer answers, never other ones.

/// The variable naming the assumptions to withdraw, comma-separated:
/// `processing-order`, `one-dispatch-per-kernel`, `dependency-order`,
/// `stream-order`, or `all`.
pub const DISTRUST_VAR: &str = "KINETO_ROCM_ATTRIBUTION_DISTRUST";

/// Which assumptions the rules may use. All hold by default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Assumptions {
    /// `processing-order` (rule 8): a packet is processed inside a HIP call
    /// on the thread that rings the doorbell, after its writer entered its
    /// call, and dispatch ids are taken from one process-wide counter in
    /// processing order.
    pub processing_order: bool,
    /// `one-dispatch-per-kernel` (rule 9): in a closed, complete window,
    /// every kernel launch and kernel node of the window's calls is exactly
    /// one of its kernel records.
    pub one_dispatch_per_kernel: bool,
    /// `dependency-order` (rules 4 and 10): a graph node's record starts, on
    /// the device's clock, no earlier than the records of the nodes it waits
    /// for end.
    pub dependency_order: bool,
    /// `stream-order` (rules 5 and 10): the work of a call on a stream
    /// starts after the work of every call enqueued earlier on it has ended,
    /// and a non-zero HIP_STREAM id names one stream for the session.
    pub stream_order: bool,
}

impl Default for Assumptions {
    fn default() -> Assumptions {
        Assumptions::ALL
    }
}

impl Assumptions {
    pub const ALL: Assumptions = Assumptions {
        processing_order: true,
        one_dispatch_per_kernel: true,
        dependency_order: true,
        stream_order: true,
    };

    pub const NONE: Assumptions = Assumptions {
        processing_order: false,
        one_dispatch_per_kernel: false,
        dependency_order: false,
        stream_order: false,
    };

    /// The assumptions left after withdrawing those [`DISTRUST_VAR`] names
    /// (`None` when unset), and a warning to log when a name was not
    /// understood: then every one is withdrawn, since the user most likely
    /// meant to withdraw something.
    pub fn parse(value: Option<&str>) -> (Assumptions, Option<String>) {
        let mut out = Assumptions::ALL;
        let Some(raw) = value else {
            return (out, None);
        };
        for word in raw.split(',').map(|w| w.trim().to_ascii_lowercase()) {
            match word.as_str() {
                "" => {}
                "processing-order" => out.processing_order = false,
                "one-dispatch-per-kernel" => out.one_dispatch_per_kernel = false,
                "dependency-order" => out.dependency_order = false,
                "stream-order" => out.stream_order = false,
                "all" => out = Assumptions::NONE,
                _ => {
                    return (
                        Assumptions::NONE,
                        Some(format!(
                            "{DISTRUST_VAR}={raw:?}: {word:?} is not one of processing-order, \
                             one-dispatch-per-kernel, dependency-order, stream-order, all; \
                             every one is withdrawn"
                        )),
                    )
                }
            }
        }
        (out, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_or_empty_keeps_every_assumption() {
        assert_eq!(Assumptions::parse(None), (Assumptions::ALL, None));
        assert_eq!(Assumptions::parse(Some(" ")), (Assumptions::ALL, None));
    }

    #[test]
    fn named_assumptions_are_withdrawn() {
        let (a, warning) = Assumptions::parse(Some("stream-order, Dependency-Order"));
        assert!(warning.is_none());
        assert_eq!(
            a,
            Assumptions {
                stream_order: false,
                dependency_order: false,
                ..Assumptions::ALL
            }
        );
        assert_eq!(Assumptions::parse(Some("all")).0, Assumptions::NONE);
    }

    #[test]
    fn an_unknown_name_withdraws_everything_and_says_so() {
        let (a, warning) = Assumptions::parse(Some("stream-order,streams"));
        assert_eq!(a, Assumptions::NONE);
        let warning = warning.expect("a warning");
        assert!(warning.contains("\"streams\"") && warning.contains(DISTRUST_VAR));
    }
}
