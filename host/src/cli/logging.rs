//! Where the `xfn` command's logs go: stderr, at the level `-v` or
//! `XFN_LOG` chooses. A function's output during a pipeline step is
//! printed as `[step] LEVEL message`; everything else (including a
//! function's output in `xfn serve`, with its `function` field) keeps
//! tracing's usual format.

use std::fmt;
use std::io::IsTerminal;

use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::{Format, Writer};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;
use xfn_runtime::guest_log;

/// The level `-v` given `count` times selects for xfn's own lines and a
/// function's, unless `XFN_LOG` is set: warnings and errors by default,
/// then info, debug and trace.
pub fn default_level(count: u8) -> &'static str {
    match count {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    }
}

/// From this many `-v`, the libraries xfn uses (wasmtime, cranelift,
/// hyper, kube...) log at trace too; below it, only their warnings and
/// errors show, so `-vv` shows a function's debug lines without
/// cranelift's.
pub const LIBRARIES_FROM: u8 = 4;

/// Where xfn's own crates log: every target under `xfn` (`xfn`,
/// `xfn_runtime`, `xfn_render`...; a directive matches a target's prefix).
const XFN_TARGETS: &str = "xfn";

/// The filter directives `-v` (`verbose` times) and `--function-log`
/// choose: libraries at warn (below [`LIBRARIES_FROM`]), xfn's own lines
/// at [`default_level`], a function's at `function` or else the same.
pub fn directives(verbose: u8, function: Option<&str>) -> String {
    let libraries = if verbose >= LIBRARIES_FROM {
        "trace"
    } else {
        "warn"
    };
    let xfn = default_level(verbose);
    let function = function.unwrap_or(xfn);
    format!(
        "{libraries},{XFN_TARGETS}={xfn},{}={function}",
        guest_log::TARGET
    )
}

/// Sends logs to stderr, filtered by `XFN_LOG` (tracing's `EnvFilter`
/// syntax, e.g. `info` or `warn,xfn::function=debug`) or else by
/// [`directives`].
pub fn init(verbose: u8, function: Option<&str>) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("XFN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(directives(verbose, function)));
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(filter)
        .event_format(StepFormat::default())
        .init();
}

/// Prints a function's output in a pipeline step as `[step] LEVEL
/// message`, and other events as tracing's default format does.
#[derive(Default)]
struct StepFormat {
    other: Format,
}

impl<S, N> FormatEvent<S, N> for StepFormat
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        if event.metadata().target() == guest_log::TARGET {
            let mut fields = GuestFields::default();
            event.record(&mut fields);
            if let Some(step) = &fields.step {
                return writeln!(
                    writer,
                    "{}",
                    step_line(step, event.metadata().level(), &fields)
                );
            }
        }
        self.other.format_event(ctx, writer, event)
    }
}

/// One line of a step's function output.
fn step_line(step: &str, level: &tracing::Level, fields: &GuestFields) -> String {
    match &fields.stream {
        Some(stream) => format!("[{step}] {level} ({stream}) {}", fields.message),
        None => format!("[{step}] {level} {}", fields.message),
    }
}

/// The fields of a function-output event (see `xfn_runtime::guest_log`).
#[derive(Default)]
struct GuestFields {
    message: String,
    step: Option<String>,
    stream: Option<String>,
}

impl Visit for GuestFields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "step" => self.step = Some(value.to_owned()),
            "stream" => self.stream = Some(value.to_owned()),
            "message" => self.message = value.to_owned(),
            _ => {}
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if field.name() == "message" {
            self.message = format!("{value:?}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_v_raises_the_level() {
        assert_eq!(
            [0, 1, 2, 3, 9].map(default_level),
            ["warn", "info", "debug", "trace", "trace"]
        );
    }

    #[test]
    fn libraries_stay_at_warn_until_four_v() {
        assert_eq!(directives(0, None), "warn,xfn=warn,xfn::function=warn");
        assert_eq!(directives(2, None), "warn,xfn=debug,xfn::function=debug");
        assert_eq!(directives(3, None), "warn,xfn=trace,xfn::function=trace");
        assert_eq!(directives(4, None), "trace,xfn=trace,xfn::function=trace");
        assert_eq!(
            directives(0, Some("debug")),
            "warn,xfn=warn,xfn::function=debug"
        );
    }

    /// The directives as tracing applies them: at `-vv` a function's debug
    /// line and xfn's pass, cranelift's and wasmtime's don't; with
    /// `--function-log debug` and no `-v`, only the function's does.
    #[test]
    fn the_filter_separates_functions_xfn_and_libraries() {
        use tracing::subscriber::with_default;
        use tracing_subscriber::layer::SubscriberExt as _;

        fn seen(directives: &str) -> Vec<String> {
            let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
            let sink = lines.clone();
            let writer = move || Sink(sink.clone());
            let subscriber = tracing_subscriber::registry()
                .with(tracing_subscriber::EnvFilter::new(directives))
                .with(
                    tracing_subscriber::fmt::layer()
                        .with_writer(writer)
                        .with_ansi(false),
                );
            with_default(subscriber, || {
                tracing::debug!(target: "xfn::function", "function debug");
                tracing::debug!(target: "xfn_runtime::sandbox", "xfn debug");
                tracing::debug!(target: "cranelift_codegen::timing", "cranelift debug");
                tracing::debug!(target: "wasmtime::runtime", "wasmtime debug");
            });
            let text = String::from_utf8(lines.lock().map(|l| l.clone()).unwrap_or_default())
                .unwrap_or_default();
            [
                "function debug",
                "xfn debug",
                "cranelift debug",
                "wasmtime debug",
            ]
            .into_iter()
            .filter(|w| text.contains(w))
            .map(str::to_owned)
            .collect()
        }
        assert_eq!(seen(&directives(2, None)), ["function debug", "xfn debug"]);
        assert_eq!(seen(&directives(0, Some("debug"))), ["function debug"]);
        assert_eq!(seen(&directives(4, None)).len(), 4);
    }

    struct Sink(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl std::io::Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if let Ok(mut lines) = self.0.lock() {
                lines.extend_from_slice(buf);
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_step_line_names_the_step_and_the_stream() {
        let mut fields = GuestFields {
            message: "hello".into(),
            step: Some("compose".into()),
            stream: None,
        };
        assert_eq!(
            step_line("compose", &tracing::Level::INFO, &fields),
            "[compose] INFO hello"
        );
        fields.stream = Some("stderr".into());
        assert_eq!(
            step_line("compose", &tracing::Level::WARN, &fields),
            "[compose] WARN (stderr) hello"
        );
    }
}
