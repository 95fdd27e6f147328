//! Starting one command, the sequence behind `execute()` whoever drives it:
//! collect the managed variables from a registry when asked (one deadline,
//! the abort wins), plan the child ([`command::plan`]), spawn it, and kill it
//! when the caller aborts. The caller supplies what only it has: its
//! resolvers' answers and the spawn (a JS thread's event loop, or the runtime).

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use crate::abort::AbortToken;
use crate::command::{self, ExecRequest};
use crate::environment::{Parent, Platform};
use crate::error::{ExecError, ShellEnvError};
use crate::process::{KillReason, OutputSink, Process, ProcessSpec};
use crate::registry::Contributor;
use crate::snapshot::{Collection, ResolvedValue, DEFAULT_COLLECT_TIMEOUT};

/// The spec's `collectTimeoutMs` (a positive finite number of milliseconds),
/// else [`DEFAULT_COLLECT_TIMEOUT`].
pub fn collect_timeout(request: &ExecRequest) -> Result<std::time::Duration, ExecError> {
    let Some(millis) = request.collect_timeout_ms else { return Ok(DEFAULT_COLLECT_TIMEOUT) };
    command::duration_from_millis(millis, false).ok_or_else(|| {
        ExecError::invalid_spec(
            "collectTimeoutMs",
            format!("must be a positive finite number of milliseconds (got {millis})"),
        )
    })
}

/// One command to start, as the caller read it.
pub struct Launch {
    /// The spec's plain-data fields.
    pub request: ExecRequest,
    /// The parent environment the child's is built from.
    pub parent: Parent,
    /// The directory a relative `workdir` is resolved against.
    pub cwd: PathBuf,
    /// Live output, if wanted.
    pub on_output: Option<OutputSink>,
    /// Fires when the caller aborts: before the spawn nothing starts (or the
    /// child is killed at once), after it the child is killed.
    pub abort: AbortToken,
}

/// A registry collection begun with the call, finished right before the
/// spawn so the child sees the registrations current when the call began.
pub struct PendingCollection<R> {
    /// The collection, over the contributor set it began with.
    pub collection: Collection<R>,
    /// The PATH the command directories go in front of.
    pub inherited_path: Option<String>,
}

/// The spec's sources of managed variables: `dshEnv` (collected already) or
/// `registry` (collected for `execution`), never both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ManagedSource {
    /// Neither: the child gets no managed variables.
    None,
    /// `dshEnv`: a snapshot the caller collected.
    DshEnv,
    /// `registry`, with `execution` as the calling agent's context.
    Registry,
}

impl ManagedSource {
    /// Which of `dshEnv`, `registry` and `execution` the spec gives; refuses
    /// `registry` with `dshEnv`, and `execution` or `collectTimeoutMs`
    /// without `registry` (they would be silently ignored).
    pub fn of_spec(dsh_env: bool, registry: bool, execution: bool) -> Result<Self, ExecError> {
        match (dsh_env, registry, execution) {
            (_, false, true) => Err(ExecError::invalid_spec(
                "execution",
                "is read only to collect from registry: give registry too, or dshEnv collected for that execution",
            )),
            (true, true, _) => Err(ExecError::invalid_spec("registry", "give either dshEnv or registry, not both")),
            (_, true, _) => Ok(Self::Registry),
            (true, false, false) => Ok(Self::DshEnv),
            (false, false, false) => Ok(Self::None),
        }
    }
}

impl Launch {
    /// Plans the child and starts it with `spawn` now, on this thread. Call
    /// inside the Tokio runtime, which watches the abort.
    pub fn start(self, spawn: impl FnOnce(ProcessSpec) -> Result<Process, ExecError>) -> Result<Process, ExecError> {
        let Self { request, parent, cwd, on_output, abort } = self;
        let mut spec = command::plan(&request, &parent, &Platform::current(), &cwd)?;
        spec.on_output = on_output;
        let process = spawn(spec)?;
        watch_abort(&process, abort);
        Ok(process)
    }

    /// Plans the child and starts it with `spawn`, awaited: the caller's
    /// thread hands the request over and goes on (the JS thread never waits
    /// for a spawn, which waits on the supervisor). Run inside the Tokio
    /// runtime, which watches the abort.
    pub async fn start_async<Spawned>(self, spawn: impl FnOnce(ProcessSpec) -> Spawned) -> Result<Process, ExecError>
    where
        Spawned: Future<Output = Result<Process, ExecError>>,
    {
        let Self { request, parent, cwd, on_output, abort } = self;
        let mut spec = command::plan(&request, &parent, &Platform::current(), &cwd)?;
        spec.on_output = on_output;
        let process = spawn(spec).await?;
        watch_abort(&process, abort);
        Ok(process)
    }

    /// Collects `pending` ([`Collection::resolve_all`] with `resolve`, within
    /// [`DEFAULT_COLLECT_TIMEOUT`]), then plans the child with the snapshot as
    /// its managed variables and starts it with `spawn`. An abort during the
    /// collection starts nothing. Run inside the Tokio runtime.
    pub async fn start_collected<R, E, Answer, Spawned>(
        mut self,
        pending: PendingCollection<R>,
        resolve: impl FnMut(Arc<Contributor<R>>) -> Answer,
        spawn: impl FnOnce(ProcessSpec) -> Spawned,
    ) -> Result<Process, E>
    where
        E: From<ShellEnvError> + From<ExecError>,
        Answer: Future<Output = Result<Vec<(String, ResolvedValue)>, E>>,
        Spawned: Future<Output = Result<Process, ExecError>>,
    {
        let PendingCollection { collection, inherited_path } = pending;
        let timeout = collect_timeout(&self.request)?;
        let collection = collection.resolve_all(timeout, self.abort.clone(), resolve).await?;
        self.request.environment.managed = collection.finish(inherited_path.as_deref()).into_iter().collect();
        Ok(self.start_async(spawn).await?)
    }
}

/// Kills `process` when `abort` fires. An abort that came before the spawn
/// still counts: the child is stopped at once. Run inside the Tokio runtime.
pub fn watch_abort(process: &Process, abort: AbortToken) {
    if !abort.can_fire() {
        return;
    }
    let watched = process.clone();
    tokio::spawn(async move {
        tokio::select! {
            () = abort.aborted() => { watched.kill(KillReason::Aborted); }
            _ = watched.wait() => {}
        }
    });
}

#[cfg(all(test, unix))]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;
    use crate::command::CommandLine;
    use crate::process;
    use crate::registry::{Declaration, Registry};

    type Values = Vec<(String, ResolvedValue)>;

    /// A launch of `sh -c script` from an empty parent environment.
    fn launch(script: &str, abort: AbortToken) -> Launch {
        let request = ExecRequest {
            command: Some(CommandLine::Argv(vec!["/bin/sh".into(), "-c".into(), script.into()])),
            ..ExecRequest::default()
        };
        Launch { request, parent: Parent::default(), cwd: std::env::temp_dir(), on_output: None, abort }
    }

    /// A collection over one contributor answering `DSH_REGION=cn`.
    fn pending_region() -> PendingCollection<Values> {
        let registry = Registry::new("/h".into(), None);
        registry
            .register(Declaration {
                name: "region".into(),
                variables: [("DSH_REGION".to_string(), Some("the region".to_string()))].into_iter().collect(),
                command_directories: Vec::new(),
                resolver: vec![("DSH_REGION".into(), ResolvedValue::String("cn".into()))],
            })
            .unwrap();
        PendingCollection { collection: Collection::begin(&registry, None).unwrap(), inherited_path: None }
    }

    fn answer(contributor: Arc<Contributor<Values>>) -> std::future::Ready<Result<Values, ExecError>> {
        std::future::ready(Ok(contributor.resolver().clone()))
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_collected_snapshot_is_the_childs_managed_environment() {
        let started = launch(r#"printf '%s %s %s' "$DSH_REGION" "$DSH_HOME" "$DSH_SHELL""#, AbortToken::never())
            .start_collected(pending_region(), answer, process::spawn_async)
            .await;
        let result = started.unwrap().wait().await;
        assert_eq!(result.exit_code, Some(0));
        assert_eq!(result.stdout.text, "cn /h 1");
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn an_abort_during_the_collection_starts_nothing() {
        let spawned = AtomicBool::new(false);
        let (abort, token) = crate::abort::pair();
        let started = launch("exit 0", token)
            .start_collected(
                pending_region(),
                |_| {
                    abort.abort();
                    std::future::pending::<Result<Values, ExecError>>()
                },
                |spec| {
                    spawned.store(true, Ordering::SeqCst);
                    process::spawn_async(spec)
                },
            )
            .await;
        assert_eq!(started.err().map(|error| error.code()), Some("ERR_SHELL_ENV_ABORTED"));
        assert!(!spawned.load(Ordering::SeqCst));
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn an_abort_before_the_spawn_kills_the_child_at_once() {
        let process = launch("sleep 30", AbortToken::fired()).start(process::spawn).unwrap();
        let result = tokio::time::timeout(std::time::Duration::from_secs(10), process.wait()).await.unwrap();
        assert!(result.aborted);
        assert!(!result.timed_out);
        assert_eq!(result.exit_code, None);
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn an_abort_after_the_spawn_kills_the_running_child() {
        let (abort, token) = crate::abort::pair();
        let process = launch("sleep 30", token).start(process::spawn).unwrap();
        abort.abort();
        let result = tokio::time::timeout(std::time::Duration::from_secs(10), process.wait()).await.unwrap();
        assert!(result.aborted);
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_plan_error_spawns_nothing() {
        let mut bad = launch("exit 0", AbortToken::never());
        bad.request.workdir = Some("/no/such/directory".into());
        let spawned = AtomicBool::new(false);
        let started = bad.start(|spec| {
            spawned.store(true, Ordering::SeqCst);
            process::spawn(spec)
        });
        assert_eq!(started.err().map(|error| error.code()), Some("ERR_SHELL_EXEC_INVALID_WORKDIR"));
        assert!(!spawned.load(Ordering::SeqCst));
    }

    #[test]
    fn dsh_env_and_registry_are_exclusive_and_execution_needs_a_registry() {
        use ManagedSource::*;
        assert_eq!(ManagedSource::of_spec(false, false, false).ok(), Some(None));
        assert_eq!(ManagedSource::of_spec(true, false, false).ok(), Some(DshEnv));
        assert_eq!(ManagedSource::of_spec(false, true, false).ok(), Some(Registry));
        assert_eq!(ManagedSource::of_spec(false, true, true).ok(), Some(Registry));
        for (given, field) in [((true, true, false), "registry"), ((false, false, true), "execution")] {
            let error = ManagedSource::of_spec(given.0, given.1, given.2).unwrap_err();
            assert_eq!(error.code(), "ERR_SHELL_EXEC_INVALID_SPEC");
            assert!(error.to_string().contains(field), "{error}");
        }
    }
}
