//! Who is told of the tool's lifecycle: the recorder (src/recorder/), which
//! registers when the library is loaded, before the SDK configures the
//! tool. Its own module so that the SDK adapter's parts (configure, the
//! callbacks) can reach it without importing each other.
use once_cell::sync::OnceCell;

static LIFECYCLE: OnceCell<&'static dyn Lifecycle> = OnceCell::new();

/// Told when the SDK has initialised the tool and when it finalises it (at
/// process exit): the recorder starts its window and writes its trace then.
pub trait Lifecycle: Sync {
    fn initialised(&self);
    fn finalising(&self);
    /// Whether it follows the program's ROCTX ranges (MARKER_CORE_API
    /// callbacks, in a context of their own, on for the whole session);
    /// asked once, when the SDK initialises the tool.
    fn follows_ranges(&self) -> bool;
    /// A ROCTX range pushed (`Some(message)`) or popped (`None`) on the
    /// SDK's thread `thread`, before the call runs.
    fn range(&self, thread: u64, pushed: Option<&str>);
}

/// The lifecycle observer, for the callbacks.
pub(super) fn lifecycle() -> Option<&'static dyn Lifecycle> {
    LIFECYCLE.get().copied()
}

/// Registers the one lifecycle observer; set it before the SDK initialises
/// the tool (when the library is loaded). False when one is set already.
pub fn observe_lifecycle(observer: &'static dyn Lifecycle) -> bool {
    LIFECYCLE.set(observer).is_ok()
}
