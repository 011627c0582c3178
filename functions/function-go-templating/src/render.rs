//! Rendering a template text as upstream does: a template named
//! `manifests` with upstream's functions, sprig's (without `env` and
//! `expandenv`) and Go's builtins, optional delimiters and options.

use std::collections::HashSet;

use crate::template::{self, Env, FuncMap, Value};

/// The name upstream gives its template.
pub const TEMPLATE_NAME: &str = "manifests";

/// Why rendering failed, each in Go's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    /// The text does not parse.
    #[error("{0}")]
    Parse(String),
    /// An option is not one Go knows.
    #[error("{0}")]
    Option(String),
    /// Execution failed.
    #[error("{0}")]
    Exec(String),
}

/// The functions a template may call.
pub struct Renderer {
    funcs: FuncMap,
    unimplemented: HashSet<&'static str>,
}

impl Default for Renderer {
    fn default() -> Self {
        Self::new()
    }
}

impl Renderer {
    /// Builtins, sprig and upstream's functions.
    pub fn new() -> Renderer {
        let mut funcs = FuncMap::new();
        template::builtins::add(&mut funcs);
        crate::sprig::add(&mut funcs);
        crate::sprig_extra::add(&mut funcs);
        crate::sprig_time::add_functions(&mut funcs);
        crate::decimal::add_functions(&mut funcs);
        crate::goutils::add_functions(&mut funcs);
        crate::fns::add(&mut funcs);
        let unimplemented = crate::sprig::UNIMPLEMENTED
            .iter()
            .chain(crate::fns::UNIMPLEMENTED)
            .copied()
            .filter(|n| !funcs.contains_key(n))
            .collect();
        Renderer {
            funcs,
            unimplemented,
        }
    }

    /// Parses and executes `text` on `data`.
    pub fn render(
        &self,
        text: &str,
        data: Value,
        delims: Option<(&str, &str)>,
        options: &[String],
        env: &mut dyn Env,
    ) -> Result<String, RenderError> {
        let (l, r) = delims.unwrap_or(("", ""));
        let mut set = template::parse(TEMPLATE_NAME, text, l, r, &self.funcs, &self.unimplemented)
            .map_err(|e| RenderError::Parse(e.0))?;
        for o in options {
            template::apply_option(&mut set, o).map_err(RenderError::Option)?;
        }
        // Execute(w, nil): the data is no value.
        let data = match data {
            Value::Nil => Value::Invalid,
            d => d,
        };
        let mut out = String::new();
        template::exec::execute(&set, TEMPLATE_NAME, data, env, &mut out)
            .map_err(|e| RenderError::Exec(e.0))?;
        Ok(out)
    }
}

/// An [`Env`] for a render: randomness from a seed, a fixed clock.
pub struct SeededEnv {
    state: u64,
    now: i128,
}

impl SeededEnv {
    /// Randomness from `seed`, the clock at `now_nanos`.
    pub fn new(seed: u64, now_nanos: i128) -> SeededEnv {
        SeededEnv {
            state: seed ^ 0x9E37_79B9_7F4A_7C15,
            now: now_nanos,
        }
    }

    /// Randomness from the system (WASI's random source in the component).
    pub fn from_system() -> SeededEnv {
        use std::hash::BuildHasher;
        let seed = std::collections::hash_map::RandomState::new().hash_one(0u8);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as i128)
            .unwrap_or(0);
        SeededEnv::new(seed, now)
    }
}

impl Env for SeededEnv {
    fn execute_named(&mut self, _: &str, _: Value) -> Result<String, String> {
        Err("no template to execute".into())
    }

    fn execute_text(&mut self, _: &str, _: Value) -> Result<String, String> {
        Err("no template to execute".into())
    }

    fn random(&mut self) -> u64 {
        // splitmix64
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn now_nanos(&mut self) -> i128 {
        self.now
    }
}
