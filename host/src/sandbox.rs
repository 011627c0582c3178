//! The per-call sandbox: the state of one `Store`.
//!
//! A guest gets no filesystem, no network, no environment, no arguments and
//! no stdin. Its stdout is discarded; its stderr is captured (bounded) so a
//! panic message can be reported. The one import it may use is logging,
//! which goes to `tracing` tagged with the function's name.

use std::sync::Arc;

use wasmtime::ResourceLimiter;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::protocol::{LogLevel, xfn::function::log};

/// The state of one call's store.
pub struct Sandbox {
    function: Arc<str>,
    wasi: WasiCtx,
    table: ResourceTable,
    stderr: MemoryOutputPipe,
    pub(crate) limits: MemoryLimits,
}

impl Sandbox {
    /// A fresh sandbox for one call of `function`.
    pub fn new(function: Arc<str>, memory_limit: usize, stderr_capture: usize) -> Sandbox {
        let stderr = MemoryOutputPipe::new(stderr_capture);
        let wasi = WasiCtx::builder()
            .stderr(stderr.clone())
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .build();
        Sandbox {
            function,
            wasi,
            table: ResourceTable::new(),
            stderr,
            limits: MemoryLimits::new(memory_limit),
        }
    }

    /// What the guest wrote to stderr, lossily decoded and trimmed.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.contents())
            .trim()
            .to_owned()
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
        let function = &*self.function;
        match level {
            LogLevel::Trace => tracing::trace!(function, "{message}"),
            LogLevel::Debug => tracing::debug!(function, "{message}"),
            LogLevel::Info => tracing::info!(function, "{message}"),
            LogLevel::Warn => tracing::warn!(function, "{message}"),
            LogLevel::Error => tracing::error!(function, "{message}"),
        }
    }
}

/// Caps the linear memory and tables of one call, and remembers whether
/// the cap was hit so the error can say so.
pub struct MemoryLimits {
    limit: usize,
    exceeded: Option<usize>,
}

impl MemoryLimits {
    fn new(limit: usize) -> MemoryLimits {
        MemoryLimits {
            limit,
            exceeded: None,
        }
    }

    /// The size a guest asked to grow to past the limit, if it did.
    pub fn exceeded(&self) -> Option<usize> {
        self.exceeded
    }

    /// The limit in bytes.
    pub fn limit(&self) -> usize {
        self.limit
    }
}

impl ResourceLimiter for MemoryLimits {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.limit {
            // `memory.grow` fails (returns -1), as on a full machine: a
            // guest may settle for less, and one that can't will trap,
            // which is then reported as hitting this limit.
            self.exceeded = Some(desired);
            return Ok(false);
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        // A table element is at most a pointer; bound tables by the same budget.
        Ok(desired.saturating_mul(8) <= self.limit)
    }
}
