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

/// The level `-v` given `count` times selects, unless `XFN_LOG` is set:
/// warnings and errors by default, then info, debug and trace.
pub fn default_level(count: u8) -> &'static str {
    match count {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    }
}

/// Sends logs to stderr, filtered by `XFN_LOG` (tracing's `EnvFilter`
/// syntax, e.g. `info` or `xfn::function=debug`) or else by `-v`.
pub fn init(verbose: u8) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("XFN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_level(verbose)));
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
