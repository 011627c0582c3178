//! The per-call sandbox: the state of one `Store`.
//!
//! A guest gets no filesystem, no network, no environment, no arguments and
//! no stdin. The tails of its stdout and stderr are captured (bounded, and
//! writing more never fails) so a panic message can be reported, and are
//! logged when the call ends. The one import it may use is logging, which
//! goes to `tracing` tagged with the function's name (see `guest_log`),
//! bounded and with control characters escaped so a guest cannot forge
//! log lines.

use std::sync::Arc;

use wasmtime::ResourceLimiter;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::capture::TailCapture;
use crate::guest_log::{GuestLog, Stream};
use crate::protocol::{LogLevel, xfn::function::log};
use crate::text::{self, MAX_GUEST_TEXT};

/// The state of one call's store.
pub struct Sandbox {
    log: GuestLog,
    wasi: WasiCtx,
    table: ResourceTable,
    stdout: TailCapture,
    stderr: TailCapture,
    pub(crate) limits: MemoryLimits,
}

impl Sandbox {
    /// A fresh sandbox for one call of `function`; the last
    /// `stderr_capture` bytes of its stdout and of its stderr are kept.
    /// Its guest sees `env` as its environment: what the user set for the
    /// function (never the host's own environment).
    pub fn new(
        function: Arc<str>,
        memory_limit: usize,
        stderr_capture: usize,
        env: &[(String, String)],
    ) -> Sandbox {
        let stdout = TailCapture::new(stderr_capture);
        let stderr = TailCapture::new(stderr_capture);
        let wasi = WasiCtx::builder()
            .envs(env)
            .stdout(stdout.clone())
            .stderr(stderr.clone())
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .build();
        Sandbox {
            log: GuestLog::new(function),
            wasi,
            table: ResourceTable::new(),
            stdout,
            stderr,
            limits: MemoryLimits::new(memory_limit),
        }
    }

    /// The end of what the guest wrote to stderr, at most
    /// [`MAX_GUEST_TEXT`] bytes, lossily decoded and trimmed, with a marker
    /// if anything before it is left out.
    pub fn stderr(&self) -> String {
        let (bytes, dropped) = self.stderr.contents();
        text::tail(&bytes, MAX_GUEST_TEXT, dropped)
    }

    /// Ends the call's log: logs what the guest printed to stdout and
    /// stderr, line by line, and how much was dropped past the bounds.
    pub fn finish_log(&mut self) {
        let (bytes, dropped) = self.stdout.contents();
        self.log.printed(Stream::Stdout, &bytes, dropped);
        let (bytes, dropped) = self.stderr.contents();
        self.log.printed(Stream::Stderr, &bytes, dropped);
        self.log.finish();
    }
}

impl WasiView for Sandbox {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl crate::protocol::xfn::function::types::Host for Sandbox {}

impl log::Host for Sandbox {
    fn write(&mut self, level: LogLevel, message: String) {
        self.log.line(Stream::Log(level), &message);
    }
}

/// Caps the linear memory and tables of one call, and remembers whether
/// the cap was hit so the error can say so.
///
/// The cap is on the call as a whole: a component that embeds several core
/// modules, each with a memory of its own, shares one budget across all of
/// them, and may define at most [`MAX_MEMORIES`] memories in the first place.
pub struct MemoryLimits {
    limit: usize,
    /// Bytes of linear memory the call holds, summed over its memories.
    used: usize,
    /// The growth approved last, taken back if the memory then fails to grow.
    pending: usize,
    exceeded: Option<usize>,
}

/// Most linear memories one call may have (the same cap `xfn push` and
/// `xfn pull` apply to a package).
pub const MAX_MEMORIES: usize = xfn_component::MAX_MEMORIES as usize;

/// Most tables one call may have.
pub const MAX_TABLES: usize = xfn_component::MAX_TABLES as usize;

/// Most core instances one call may have.
pub const MAX_INSTANCES: usize = 32;

impl MemoryLimits {
    fn new(limit: usize) -> MemoryLimits {
        MemoryLimits {
            limit,
            used: 0,
            pending: 0,
            exceeded: None,
        }
    }

    /// The total size, over all of the call's memories, that a guest asked
    /// for past the limit, if it did.
    pub fn exceeded(&self) -> Option<usize> {
        self.exceeded
    }

    /// The limit in bytes.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Takes `growth` bytes from the call's budget, if they fit.
    fn reserve(&mut self, growth: usize) -> bool {
        let total = self.used.saturating_add(growth);
        if total > self.limit {
            // The growth fails (`memory.grow` returns -1), as on a full
            // machine: a guest may settle for less, and one that can't will
            // trap, which is then reported as hitting this limit.
            self.exceeded = Some(total);
            self.pending = 0;
            return false;
        }
        self.used = total;
        self.pending = growth;
        true
    }

    /// Returns the growth approved last, which then failed.
    fn give_back_pending(&mut self) {
        self.used -= std::mem::take(&mut self.pending);
    }
}

impl ResourceLimiter for MemoryLimits {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        // Also called with `current == 0` when a memory is created, so
        // `used` counts every memory of the call from its first page.
        Ok(self.reserve(desired.saturating_sub(current)))
    }

    fn memory_grow_failed(&mut self, _error: wasmtime::Error) -> wasmtime::Result<()> {
        self.give_back_pending();
        Ok(())
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        // A table element is at most a pointer: tables draw on the same budget.
        let growth = desired.saturating_sub(current).saturating_mul(8);
        Ok(self.reserve(growth))
    }

    fn table_grow_failed(&mut self, _error: wasmtime::Error) -> wasmtime::Result<()> {
        self.give_back_pending();
        Ok(())
    }

    fn instances(&self) -> usize {
        MAX_INSTANCES
    }

    fn tables(&self) -> usize {
        MAX_TABLES
    }

    fn memories(&self) -> usize {
        MAX_MEMORIES
    }
}
