//! Logging: env_logger on first use unless the host installed a logger.
//! `KINETO_ROCM_LOG` (env_logger syntax) sets the level; default `warn`.
use once_cell::sync::OnceCell;

static INIT: OnceCell<()> = OnceCell::new();

pub fn init() {
    INIT.get_or_init(|| {
        let env = env_logger::Env::new().filter_or("KINETO_ROCM_LOG", "warn");
        let _ = env_logger::Builder::from_env(env)
            .format_timestamp(None)
            .try_init();
    });
}
