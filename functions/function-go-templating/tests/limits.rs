//! The engine's bounds hold within a wasm guest's 1 MiB stack: the deepest
//! nesting and template recursion it accepts run on a 1 MiB thread in an
//! optimised build (`cargo test --release`; a debug build's frames are
//! several times larger, so it gets 8 MiB), and one level more is refused
//! with an error rather than a crash.

use function_go_templating::render::{Renderer, SeededEnv};
use function_go_templating::template::Value;
use function_go_templating::template::exec::MAX_DEPTH;
use function_go_templating::template::parse::MAX_NESTING;

fn render_on_small_stack(text: String) -> Result<String, String> {
    std::thread::Builder::new()
        .stack_size(if cfg!(debug_assertions) {
            8 << 20
        } else {
            1 << 20
        })
        .spawn(move || {
            Renderer::new()
                .render(&text, Value::Invalid, None, &[], &mut SeededEnv::new(1, 0))
                .map_err(|e| e.to_string())
        })
        .expect("spawn")
        .join()
        .expect("no stack overflow")
}

#[test]
fn deepest_nesting_fits_and_one_more_is_refused() {
    let nested = |n: usize| format!("{}x{}", "{{if 1}}".repeat(n), "{{end}}".repeat(n));
    assert_eq!(
        render_on_small_stack(nested(MAX_NESTING - 1)).as_deref(),
        Ok("x")
    );
    let err = render_on_small_stack(nested(MAX_NESTING + 1)).expect_err("too deep");
    assert!(err.contains("nests deeper than"), "{err}");
}

#[test]
fn deepest_template_recursion_fits_and_one_more_is_refused() {
    let rec = |n: usize| {
        format!(
            "{{{{define \"r\"}}}}{{{{if lt . {n}}}}}{{{{template \"r\" (add . 1)}}}}{{{{else}}}}done{{{{end}}}}{{{{end}}}}{{{{template \"r\" 0}}}}"
        )
    };
    assert_eq!(
        render_on_small_stack(rec(MAX_DEPTH - 1)).as_deref(),
        Ok("done")
    );
    let err = render_on_small_stack(rec(MAX_DEPTH + 1)).expect_err("too deep");
    assert!(err.contains("exceeded maximum template depth"), "{err}");
    // include recurses through a function call: also bounded.
    let inc = "{{define \"i\"}}{{include \"i\" .}}{{end}}{{include \"i\" 0}}".to_string();
    let err = render_on_small_stack(inc).expect_err("include recursion");
    assert!(err.contains("exceeded maximum template depth"), "{err}");
}

#[test]
fn growing_values_meet_the_bounds() {
    // A string doubled in a loop, and a list copied as it grows: Go would
    // run out of memory or time; the port stops with an error.
    let doubling =
        "{{ $s := \"x\" }}{{ range until 100 }}{{ $s = printf \"%s%s\" $s $s }}{{ end }}"
            .to_string();
    let err = render_on_small_stack(doubling).expect_err("bounded");
    assert!(
        err.contains("larger than") || err.contains("steps"),
        "{err}"
    );
    let appending =
        "{{ $l := list }}{{ range until 1000000 }}{{ $l = append $l . }}{{ end }}".to_string();
    let err = render_on_small_stack(appending).expect_err("bounded");
    assert!(err.contains("exceeded"), "{err}");
}
