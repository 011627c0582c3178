//! The evaluator: runs a program's statements and computes its values.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use crate::ast::*;
use crate::builtins;
use crate::error::{Error, eval_err, unsupported};
use crate::value::{Dict, Func, Map, SchemaType, Value, equal};

/// Bounds on what a program may do, so that a hostile program ends with an
/// error instead of stalling or exhausting its host.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Evaluation steps (expressions and statements evaluated).
    pub max_steps: u64,
    /// Depth of nested calls (lambdas, schema instantiations).
    pub max_call_depth: u32,
    /// Length of a string, in bytes.
    pub max_str_len: usize,
    /// Length of a list or dict.
    pub max_collection_len: usize,
    /// Native stack the parser and evaluator may use, in bytes (deep
    /// nesting and recursion end here, within a wasm guest's 1 MiB stack).
    pub max_stack_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_steps: 50_000_000,
            max_call_depth: 200,
            max_str_len: 16 << 20,
            max_collection_len: 1 << 20,
            max_stack_bytes: crate::stack::DEFAULT_STACK_BUDGET,
        }
    }
}

/// What a comprehension does with each binding.
type CompBody<'a> = dyn FnMut(&mut Interp, &mut Vec<Value>) -> Result<(), Error> + 'a;

/// One evaluated entry of a config literal: a key path, its operator and value.
pub(crate) type ConfigEntry = (Vec<String>, EntryOp, Value, u32);

/// The interpreter's state while a program runs.
pub struct Interp {
    /// The imported user modules (their parked states), the package
    /// files they come from, and which one is running.
    pub(crate) mods: crate::modules::Registry,
    /// The running module's state (the others are parked in `mods`).
    pub(crate) module: ModState,
    /// Local scopes, innermost last; a call starts a fresh stack.
    pub(crate) locals: Vec<Map>,
    pub(crate) options: HashMap<String, Value>,
    pub(crate) limits: Limits,
    steps: u64,
    depth: u32,
    /// Text printed by `print()`.
    pub(crate) printed: String,
    stack_base: usize,
}

/// The per-module part of the interpreter's state: the running module's
/// is [`Interp::module`]; a module that is not running keeps it parked in
/// the registry (see [`Interp::in_module`]).
#[derive(Default)]
pub(crate) struct ModState {
    globals: Map,
    assigned: HashSet<String>,
    /// Names of modules imported (alias → module).
    modules: HashMap<String, String>,
    /// The program, for statements evaluated before their turn.
    prog: Rc<Vec<Stmt>>,
    /// Top-level names set by one unconditional statement, and its index.
    pending: HashMap<String, usize>,
    /// Which top-level statements have run (or are running).
    done: Vec<bool>,
    /// Names top-level `if`s set.
    top_names: HashSet<String>,
    /// The top-level statement running.
    cur_top: usize,
    /// Where each output key goes: top-level config expressions' keys
    /// first, then variables, each in the order of the statements.
    doc_pos: HashMap<String, (bool, usize)>,
    /// Type aliases (`type A = int | str`).
    aliases: HashMap<String, Type>,
    /// A scalar top-level expression, and its line.
    scalar_doc: Option<(Value, u32)>,
    /// The documents of a top-level list expression, and its line.
    pub(crate) stream: Option<(Vec<Value>, u32)>,
    /// The output document: public top-level variables and the entries of
    /// top-level config expressions, in the order they were set.
    doc: Map,
    /// Where the module is (its package and directory).
    pub(crate) loc: crate::modules::ModLoc,
}

impl ModState {
    /// The empty state of a module at `loc`.
    pub(crate) fn with_loc(loc: crate::modules::ModLoc) -> ModState {
        ModState {
            loc,
            ..ModState::default()
        }
    }
}

impl Interp {
    /// A new interpreter with the given `option()` values and limits.
    pub fn new(options: HashMap<String, Value>, limits: Limits) -> Interp {
        Interp {
            mods: crate::modules::Registry::new(Default::default(), Default::default()),
            module: ModState::default(),
            locals: Vec::new(),
            options,
            limits,
            steps: 0,
            depth: 0,
            printed: String::new(),
            stack_base: crate::stack::here(),
        }
    }

    /// Runs a program; its output is the top-level variables that are
    /// public (not `_`-prefixed) data, in the order they were first set.
    pub fn run(&mut self, prog: Rc<Vec<Stmt>>) -> Result<Map, Error> {
        self.stack_base = crate::stack::here();
        self.run_top(prog)?;
        self.output()
    }

    /// Runs `f` with module `id`'s globals in force (a lambda or schema
    /// of an imported module sees its own module's names), then brings
    /// the running module back. Local scopes are not touched.
    pub(crate) fn in_module<T>(
        &mut self,
        id: usize,
        f: impl FnOnce(&mut Self) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let prev = self.mods.current;
        if id == prev {
            return f(self);
        }
        let parked = std::mem::take(&mut self.mods.states[id]);
        self.mods.states[prev] = std::mem::replace(&mut self.module, parked);
        self.mods.current = id;
        let r = f(self);
        let parked = std::mem::take(&mut self.mods.states[prev]);
        self.mods.states[id] = std::mem::replace(&mut self.module, parked);
        self.mods.current = prev;
        r
    }

    /// A global of module `id` (the running one or a parked one).
    pub(crate) fn module_global(&self, id: usize, name: &str) -> Option<&Value> {
        if id == self.mods.current {
            self.module.globals.get(name)
        } else {
            self.mods.states.get(id)?.globals.get(name)
        }
    }

    /// Runs a module's top-level statements: imports first (KCL resolves
    /// them before the module runs), then schemas, then the rest in order.
    pub(crate) fn run_top(&mut self, prog: Rc<Vec<Stmt>>) -> Result<(), Error> {
        check_immutable(&prog, &mut HashMap::new())?;
        for s in prog.iter() {
            if let StmtKind::Import(..) = &s.kind {
                self.stmt(s)?;
            }
        }
        self.hoist_schemas(&prog)?;
        // KCL's top level does not depend on order: a name a later
        // statement sets is evaluated when it is first read. The output
        // keeps the statements' order.
        for (i, s) in prog.iter().enumerate() {
            let name = match &s.kind {
                StmtKind::Assign(targets, _, _) => match targets.as_slice() {
                    [Target::Name(n)] => Some(n.clone()),
                    _ => None,
                },
                StmtKind::Attr {
                    name,
                    value: Some((EntryOp::Override, _)),
                    ..
                } => Some(name.clone()),
                _ => None,
            };
            if let Some(n) = name {
                self.module.pending.entry(n).or_insert(i);
            }
            // A name only an `if` sets, read before the `if` runs.
            if let StmtKind::If(arms) = &s.kind {
                for (_, body) in arms {
                    collect_names(body, &mut self.module.top_names);
                }
            }
        }
        self.module.done = vec![false; prog.len()];
        self.module.prog = prog.clone();
        for (i, s) in prog.iter().enumerate() {
            if self.module.done[i] {
                continue;
            }
            self.module.done[i] = true;
            self.module.cur_top = i;
            // The module's docstring.
            if i == 0
                && matches!(
                    &s.kind,
                    StmtKind::Expr(Expr {
                        kind: ExprKind::Str(_),
                        ..
                    })
                )
            {
                continue;
            }
            if let StmtKind::Import(..) = &s.kind {
                continue;
            }
            self.stmt(s)?;
        }
        Ok(())
    }

    /// The main module's output, once it has run.
    fn output(&mut self) -> Result<Map, Error> {
        let has_output = self
            .module
            .doc
            .values()
            .any(|v| !matches!(v, Value::Undefined));
        if let Some((v, line)) = &self.module.scalar_doc {
            if has_output {
                return eval_err(
                    format!(
                        "conflicting values between {{...}} and {}",
                        v.to_kcl_string()
                    ),
                    *line,
                );
            }
            return unsupported("a program whose output is a single scalar", *line);
        }
        if let Some((_, line)) = &self.module.stream
            && has_output
        {
            return unsupported(
                "a top-level list expression beside other output (mixed YAML stream)",
                *line,
            );
        }
        let mut out = Map::new();
        // In the order of the statements that set them.
        let mut entries: Vec<(String, Value)> =
            std::mem::take(&mut self.module.doc).into_iter().collect();
        entries.sort_by_key(|(k, _)| {
            self.module
                .doc_pos
                .get(k)
                .copied()
                .unwrap_or((true, usize::MAX))
        });
        for (k, v) in entries {
            // A variable's entry holds its last value.
            let v = match self.module.globals.get(&k) {
                Some(g) if self.module.assigned.contains(&k) => g.clone(),
                _ => v,
            };
            if k.starts_with('_') && self.module.assigned.contains(&k)
                || !v.is_data()
                || matches!(v, Value::Undefined)
            {
                continue;
            }
            out.insert(k, v);
        }
        Ok(out)
    }

    pub(crate) fn step(&mut self, line: u32) -> Result<(), Error> {
        self.steps += 1;
        if self.steps > self.limits.max_steps {
            return Err(Error::Limit {
                line,
                msg: format!("the program ran more than {} steps", self.limits.max_steps),
            });
        }
        if crate::stack::used_since(self.stack_base) > self.limits.max_stack_bytes {
            return Err(Error::Limit {
                line,
                msg: format!(
                    "calls nest deeper than the interpreter's stack of {} KiB allows (runaway recursion?)",
                    self.limits.max_stack_bytes >> 10
                ),
            });
        }
        Ok(())
    }

    /// Counts work proportional to `n` (copying long lists and strings)
    /// against the step limit: one step per 64 items.
    pub(crate) fn charge(&mut self, n: usize, line: u32) -> Result<(), Error> {
        self.steps = self.steps.saturating_add((n / 64) as u64);
        self.step(line)
    }

    pub(crate) fn check_str(&self, s: &str, line: u32) -> Result<(), Error> {
        if s.len() > self.limits.max_str_len {
            return Err(Error::Limit {
                line,
                msg: format!("a string is longer than {} bytes", self.limits.max_str_len),
            });
        }
        Ok(())
    }

    /// Refuses to write a value as text when the text would pass the
    /// string limit (a list can hold one large string many times).
    pub(crate) fn check_text(&self, v: &Value, line: u32) -> Result<(), Error> {
        let limit = self.limits.max_str_len;
        if v.text_size(limit) > limit {
            return Err(Error::Limit {
                line,
                msg: format!("a value's text would be longer than {limit} bytes"),
            });
        }
        Ok(())
    }

    pub(crate) fn check_len(&self, n: usize, line: u32) -> Result<(), Error> {
        if n > self.limits.max_collection_len {
            return Err(Error::Limit {
                line,
                msg: format!(
                    "a list or dict has more than {} items",
                    self.limits.max_collection_len
                ),
            });
        }
        Ok(())
    }

    // ------------------------------------------------------------ statements

    fn stmt(&mut self, s: &Stmt) -> Result<(), Error> {
        self.step(s.line)?;
        match &s.kind {
            StmtKind::Import(path, alias) => {
                let name = alias
                    .clone()
                    .unwrap_or_else(|| path.rsplit('.').next().unwrap_or(path).to_string());
                let key: Rc<str> = if builtins::is_module(path) {
                    path.as_str().into()
                } else if crate::stdlib::SYSTEM_MODULES.contains(&path.as_str()) {
                    return unsupported(format!("import of module {path:?}"), s.line);
                } else {
                    self.import_user_module(path, s.line)?
                };
                self.module.modules.insert(name.clone(), path.clone());
                self.set_name(&name, Value::Module(key), s.line, true)?;
            }
            StmtKind::Assign(targets, _, value) => {
                let v = self.expr(value)?;
                for t in targets {
                    self.assign(t, v.clone(), s.line)?;
                }
            }
            StmtKind::AugAssign(t, op, value) => {
                let rhs = self.expr(value)?;
                let Target::Name(n) = t else {
                    return unsupported("augmented assignment to an attribute or index", s.line);
                };
                let cur = self.lookup(n, s.line)?;
                let v = builtins::binary(self, op, &cur, &rhs, s.line)?;
                self.set_name(n, v, s.line, true)?;
            }
            StmtKind::Attr {
                name, ty, value, ..
            } => {
                // Outside a schema: a typed assignment, or `a: A {...}`,
                // which unifies with an earlier `a: A {...}`.
                let existing = match value {
                    Some((EntryOp::Union, _)) => self
                        .module
                        .globals
                        .get(name)
                        .cloned()
                        .filter(|v| matches!(v, Value::Dict(_))),
                    _ => None,
                };
                let v = match (value, existing) {
                    (Some((_, e)), Some(old)) => self.unify_with_expr(&old, e, name, s.line)?,
                    (Some((_, e)), None) => self.expr(e)?,
                    (None, _) => Value::Undefined,
                };
                let v = self.convert(v, ty, s.line, name)?;
                self.set_name(name, v, s.line, true)?;
            }
            StmtKind::If(arms) => {
                for (cond, body) in arms {
                    let take = match cond {
                        Some(c) => self.expr(c)?.truthy(),
                        None => true,
                    };
                    if take {
                        for st in body {
                            self.stmt(st)?;
                        }
                        break;
                    }
                }
            }
            StmtKind::Assert(cond, guard, msg) => {
                if let Some(g) = guard
                    && !self.expr(g)?.truthy()
                {
                    return Ok(());
                }
                if !self.expr(cond)?.truthy() {
                    let m = match msg {
                        Some(m) => self.expr(m)?.to_kcl_string(),
                        None => "assertion failed".into(),
                    };
                    return eval_err(m, s.line);
                }
            }
            StmtKind::Schema(def) => {
                if matches!(self.module.globals.get(&def.name), Some(Value::Schema(st)) if Rc::ptr_eq(&st.def, def))
                {
                    // Defined before the run (hoisted).
                    return Ok(());
                }
                let st = self.schema_type(def)?;
                self.set_name(&def.name, Value::Schema(st), s.line, true)?;
            }
            StmtKind::Deprecated(..) => {}
            StmtKind::TypeAlias(name, ty) => {
                self.module.aliases.insert(name.clone(), ty.clone());
            }
            StmtKind::Expr(e) => {
                let v = self.expr(e)?;
                if self.locals.is_empty() && !v.is_none_like() {
                    match v {
                        // A config at top level adds its entries to the output.
                        Value::Dict(d) => {
                            for (k, x) in &d.map {
                                self.module.doc.insert(k.clone(), x.clone());
                                self.module
                                    .doc_pos
                                    .entry(k.clone())
                                    .or_insert((false, self.module.cur_top));
                            }
                        }
                        Value::Func(_) | Value::Schema(_) | Value::Module(_) => {}
                        // A scalar is a document too: it conflicts with any
                        // other output (the module's docstring excepted).
                        Value::Str(_) | Value::Bool(_) | Value::Int(_) | Value::Float(_) => {
                            if self.module.doc.is_empty() && self.module.scalar_doc.is_none() {
                                self.module.scalar_doc = Some((v, s.line));
                            } else {
                                return eval_err(
                                    format!(
                                        "conflicting values between {{...}} and {}",
                                        v.to_kcl_string()
                                    ),
                                    s.line,
                                );
                            }
                        }
                        // A list at top level is a stream of YAML documents.
                        Value::List(l) if self.module.stream.is_none() => {
                            self.module.stream = Some((l.to_vec(), s.line))
                        }
                        Value::List(_) => {
                            return eval_err("conflicting values between [...] and [...]", s.line);
                        }
                        _ => {
                            return unsupported(
                                "a top-level expression statement that is neither a config nor one list",
                                s.line,
                            );
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Defines the top-level schemas before the program runs, parents and
    /// mixins first: KCL lets a schema name one defined further down.
    fn hoist_schemas(&mut self, prog: &[Stmt]) -> Result<(), Error> {
        let mut pending: Vec<&Rc<SchemaDef>> = prog
            .iter()
            .filter_map(|s| match &s.kind {
                StmtKind::Schema(d) => Some(d),
                _ => None,
            })
            .collect();
        while !pending.is_empty() {
            let before = pending.len();
            let mut rest = Vec::new();
            for def in pending {
                let named = |e: &Option<Expr>| match e.as_ref().map(|e| &e.kind) {
                    Some(ExprKind::Name(n)) => Some(n.clone()),
                    _ => None,
                };
                let deps: Vec<String> = named(&def.parent)
                    .into_iter()
                    .chain(def.mixins.iter().filter_map(|m| match &m.kind {
                        ExprKind::Name(n) => Some(n.clone()),
                        _ => None,
                    }))
                    .collect();
                if deps
                    .iter()
                    .all(|d| matches!(self.module.globals.get(d), Some(Value::Schema(_))))
                {
                    let st = self.schema_type(def)?;
                    self.set_name(&def.name, Value::Schema(st), def.line, true)?;
                } else {
                    rest.push(def);
                }
            }
            if rest.len() == before {
                // The rest name something else; they are defined in order.
                break;
            }
            pending = rest;
        }
        Ok(())
    }

    fn schema_type(&mut self, def: &Rc<SchemaDef>) -> Result<Rc<SchemaType>, Error> {
        let parent = match &def.parent {
            Some(p) => match self.expr(p)? {
                Value::Schema(s) => Some(s),
                other => {
                    return eval_err(
                        format!(
                            "a schema can only inherit from a schema, not {}",
                            other.type_name()
                        ),
                        def.line,
                    );
                }
            },
            None => None,
        };
        let mut mixins = Vec::new();
        for m in &def.mixins {
            match self.expr(m)? {
                Value::Schema(s) => mixins.push(s),
                other => {
                    return eval_err(
                        format!("a mixin must be a schema, not {}", other.type_name()),
                        def.line,
                    );
                }
            }
        }
        Ok(Rc::new(SchemaType {
            def: def.clone(),
            parent,
            mixins,
            module: self.mods.current,
        }))
    }

    fn assign(&mut self, t: &Target, v: Value, line: u32) -> Result<(), Error> {
        match t {
            Target::Name(n) => self.set_name(n, v, line, false),
            Target::Path(n, path) => {
                let mut keys = Vec::new();
                for p in path {
                    keys.push(self.expr(p)?);
                }
                let cur = self.lookup(n, line)?;
                let new = set_path(cur, &keys, v, line)?;
                self.set_name(n, new, line, true)
            }
        }
    }

    /// Sets a variable: in the innermost local scope, or a global.
    pub(crate) fn set_name(
        &mut self,
        n: &str,
        v: Value,
        line: u32,
        allow_reassign: bool,
    ) -> Result<(), Error> {
        if let Some(scope) = self.locals.last_mut() {
            scope.insert(n.to_string(), v);
            return Ok(());
        }
        if builtins::is_builtin(n) && !n.contains('.') {
            // KCL leaves such a variable out of its output.
            return unsupported(
                format!("a top-level variable named after the builtin {n}()"),
                line,
            );
        }
        if !allow_reassign && !n.starts_with('_') && self.module.assigned.contains(n) {
            return eval_err(
                format!("Can not change the value of '{n}', because it was declared immutable"),
                line,
            );
        }
        self.module.assigned.insert(n.to_string());
        if !n.starts_with('_') {
            self.module.doc.insert(n.to_string(), v.clone());
            self.module
                .doc_pos
                .entry(n.to_string())
                .or_insert((true, self.module.cur_top));
        }
        self.module.globals.insert(n.to_string(), v);
        Ok(())
    }

    pub(crate) fn lookup(&mut self, n: &str, line: u32) -> Result<Value, Error> {
        for scope in self.locals.iter().rev() {
            if let Some(v) = scope.get(n) {
                return Ok(v.clone());
            }
        }
        if let Some(v) = self.module.globals.get(n) {
            return Ok(v.clone());
        }
        if let Some(&i) = self.module.pending.get(n)
            && !self.module.done[i]
        {
            // Set further down the program: evaluated now, at top level.
            self.module.done[i] = true;
            let prog = self.module.prog.clone();
            let saved = std::mem::take(&mut self.locals);
            let saved_top = std::mem::replace(&mut self.module.cur_top, i);
            let r = self.stmt(&prog[i]);
            self.module.cur_top = saved_top;
            self.locals = saved;
            r?;
            if let Some(v) = self.module.globals.get(n) {
                return Ok(v.clone());
            }
        }
        if let Some(&i) = self.module.pending.get(n)
            && self.module.done[i]
            && self.locals.is_empty()
        {
            // Read while its own statement runs: a builtin of that name,
            // or a cycle, which is Undefined in KCL.
            if builtins::is_builtin(n) {
                return Ok(Value::Func(Rc::new(Func::Builtin(n.to_string(), None))));
            }
            return Ok(Value::Undefined);
        }
        if builtins::is_builtin(n) {
            return Ok(Value::Func(Rc::new(Func::Builtin(n.to_string(), None))));
        }
        if self.module.top_names.contains(n) {
            // KCL may evaluate the `if` first (its lazy top level), or not.
            return unsupported(
                format!("reading '{n}' before the top-level `if` that sets it (lazy evaluation)"),
                line,
            );
        }
        eval_err(format!("name '{n}' is not defined"), line)
    }

    // ------------------------------------------------------------ expressions

    /// Evaluates an expression.
    pub fn expr(&mut self, e: &Expr) -> Result<Value, Error> {
        self.step(e.line)?;
        let line = e.line;
        Ok(match &e.kind {
            ExprKind::Name(n) => self.lookup(n, line)?,
            ExprKind::None => Value::None,
            ExprKind::Undefined => Value::Undefined,
            ExprKind::Bool(b) => Value::Bool(*b),
            ExprKind::Int(i) => Value::Int(*i),
            ExprKind::Float(f) => Value::Float(*f),
            ExprKind::Unit(n, suffix) => {
                let factor = crate::lexer::MULTIPLIERS
                    .iter()
                    .find(|(s, _)| s == suffix)
                    .map(|(_, f)| *f)
                    .unwrap_or(1.0);
                Value::Unit(*n as f64 * factor, format!("{n}{suffix}").into())
            }
            ExprKind::Str(segs) => {
                let mut s = String::new();
                for seg in segs {
                    match seg {
                        StrSeg::Lit(l) => s.push_str(l),
                        StrSeg::Expr(x, spec) => {
                            let v = self.expr(x)?;
                            match spec.as_deref() {
                                None => {
                                    self.check_text(&v, line)?;
                                    s.push_str(&v.to_kcl_string())
                                }
                                Some("#json") => {
                                    s.push_str(&builtins::json_encode(&v, None, line)?)
                                }
                                Some("#yaml") => s.push_str(&crate::yaml::encode(&v, line)?),
                                Some(other) => {
                                    return unsupported(
                                        format!("string interpolation format {other:?}"),
                                        line,
                                    );
                                }
                            }
                        }
                    }
                    self.check_str(&s, line)?;
                }
                Value::str(s)
            }
            ExprKind::List(items) => {
                let mut out = Vec::new();
                self.list_items(items, &mut out, line)?;
                Value::list(out)
            }
            ExprKind::Config(entries) => {
                let mut evaluated = Vec::new();
                self.locals.push(Map::new());
                let r = self.entries(entries, &mut evaluated);
                let map = self.locals.pop().unwrap_or_default();
                r?;
                let mut ops = std::collections::BTreeMap::new();
                for (path, op, _, _) in &evaluated {
                    if path.len() == 1 {
                        if *op == EntryOp::Union {
                            ops.remove(&path[0]);
                        } else {
                            ops.insert(path[0].clone(), *op);
                        }
                    }
                }
                Value::Dict(Rc::new(Dict {
                    map,
                    schema: None,
                    ops,
                }))
            }
            ExprKind::ListComp(body, fors) => {
                let mut out = Vec::new();
                self.locals.push(Map::new());
                let r = self.comp(
                    fors,
                    0,
                    &mut |it, out: &mut Vec<Value>| {
                        let v = it.expr(body)?;
                        out.push(v);
                        it.check_len(out.len(), line)
                    },
                    &mut out,
                );
                self.locals.pop();
                r?;
                Value::list(out)
            }
            ExprKind::DictComp(k, v, fors) => {
                let mut out: Vec<Value> = Vec::new();
                let mut map = Map::new();
                self.locals.push(Map::new());
                let r = self.comp(
                    fors,
                    0,
                    &mut |it, _| {
                        let key = it.expr(k)?;
                        let val = it.expr(v)?;
                        let Value::Str(ks) = key else {
                            return eval_err(
                                format!("a dict key must be a string, not {}", key.type_name()),
                                line,
                            );
                        };
                        apply_entry(&mut map, &[ks.to_string()], EntryOp::Union, val, line)?;
                        it.check_len(map.len(), line)
                    },
                    &mut out,
                );
                self.locals.pop();
                r?;
                Value::dict(map)
            }
            ExprKind::Attr(base, name, safe) => {
                let b = self.expr(base)?;
                if *safe && b.is_none_like() {
                    return Ok(Value::None);
                }
                self.attr(&b, name, line)?
            }
            ExprKind::Index(base, idx, safe) => {
                let b = self.expr(base)?;
                if *safe && b.is_none_like() {
                    return Ok(Value::None);
                }
                let i = self.expr(idx)?;
                index(&b, &i, line)?
            }
            ExprKind::Slice(base, parts, safe) => {
                let b = self.expr(base)?;
                if *safe && b.is_none_like() {
                    return Ok(Value::None);
                }
                let mut p = [None, None, None];
                for (i, x) in parts.iter().enumerate() {
                    if let Some(x) = x {
                        p[i] = match self.expr(x)? {
                            Value::Int(n) => Some(n),
                            Value::None => None,
                            other => {
                                return eval_err(
                                    format!(
                                        "slice indices must be integers, not {}",
                                        other.type_name()
                                    ),
                                    line,
                                );
                            }
                        };
                    }
                }
                builtins::slice(&b, p, line)?
            }
            ExprKind::Call(callee, args, kwargs) => {
                let f = self.expr(callee)?;
                let mut a = Vec::new();
                for x in args {
                    a.push(self.expr(x)?);
                }
                let mut kw = Vec::new();
                for (k, x) in kwargs {
                    kw.push((k.clone(), self.expr(x)?));
                }
                self.call(&f, a, kw, line)?
            }
            ExprKind::Unary(op, x) => {
                let v = self.expr(x)?;
                builtins::unary(op, &v, line)?
            }
            ExprKind::Binary(op, l, r) => match *op {
                "and" => {
                    let lv = self.expr(l)?;
                    if !lv.truthy() { lv } else { self.expr(r)? }
                }
                "or" => {
                    let lv = self.expr(l)?;
                    if lv.truthy() { lv } else { self.expr(r)? }
                }
                _ => {
                    let lv = self.expr(l)?;
                    let rv = self.expr(r)?;
                    builtins::binary(self, op, &lv, &rv, line)?
                }
            },
            ExprKind::Compare(first, rest) => {
                let mut cur = self.expr(first)?;
                for (op, x) in rest {
                    let next = self.expr(x)?;
                    if !builtins::binary(self, op, &cur, &next, line)?.truthy() {
                        return Ok(Value::Bool(false));
                    }
                    cur = next;
                }
                Value::Bool(true)
            }
            ExprKind::IfElse(cond, a, b) => {
                if self.expr(cond)?.truthy() {
                    self.expr(a)?
                } else {
                    self.expr(b)?
                }
            }
            ExprKind::Lambda(l) => {
                let mut env = Map::new();
                for scope in &self.locals {
                    for (k, v) in scope {
                        env.insert(k.clone(), v.clone());
                    }
                }
                Value::Func(Rc::new(Func::Lambda(
                    l.clone(),
                    Rc::new(env),
                    self.mods.current,
                )))
            }
            ExprKind::SchemaInst(callee, args, kwargs, cfg) => {
                let st = match self.expr(callee)? {
                    Value::Schema(s) => s,
                    // `instance {...}`: the instance's values and the
                    // config make a new instance of its schema.
                    old @ Value::Dict(_)
                        if matches!(&old, Value::Dict(d) if d.schema.is_some())
                            && args.is_empty()
                            && kwargs.is_empty() =>
                    {
                        return self.unify_with_expr(&old, e, "", line);
                    }
                    Value::Dict(_) => {
                        return unsupported(
                            "unifying a plain dict with a config (`dict {...}`)",
                            line,
                        );
                    }
                    other => {
                        return eval_err(format!("'{}' is not a schema", other.type_name()), line);
                    }
                };
                let mut a = Vec::new();
                for x in args {
                    a.push(self.expr(x)?);
                }
                let mut kw = Vec::new();
                for (k, x) in kwargs {
                    kw.push((k.clone(), self.expr(x)?));
                }
                let entries = match &cfg.kind {
                    ExprKind::Config(es) => {
                        let mut out = Vec::new();
                        self.locals.push(Map::new());
                        let r = self.entries(es, &mut out);
                        self.locals.pop();
                        r?;
                        out
                    }
                    _ => return unsupported("a schema instantiated with a comprehension", line),
                };
                self.instantiate(&st, a, kw, entries, line)?
            }
            ExprKind::As(x, ty) => {
                let v = self.expr(x)?;
                self.convert(v, ty, line, "`as`")?
            }
            ExprKind::Quant(op, vars, iter, body, guard) => {
                let coll = self.expr(iter)?;
                self.quantifier(op, vars, &coll, body, guard.as_deref(), line)?
            }
        })
    }

    fn list_items(
        &mut self,
        items: &[ListItem],
        out: &mut Vec<Value>,
        line: u32,
    ) -> Result<(), Error> {
        for it in items {
            match it {
                ListItem::Expr(e) => out.push(self.expr(e)?),
                ListItem::Star(e) => match self.expr(e)? {
                    Value::List(l) => out.extend(l.iter().cloned()),
                    Value::Dict(d) => out.extend(d.map.keys().map(|k| Value::str(k.as_str()))),
                    Value::None | Value::Undefined => {}
                    other => {
                        return eval_err(
                            format!("'{}' object is not iterable", other.type_name()),
                            line,
                        );
                    }
                },
                ListItem::If(arms) => {
                    for (cond, body) in arms {
                        let take = match cond {
                            Some(c) => self.expr(c)?.truthy(),
                            None => true,
                        };
                        if take {
                            self.list_items(body, out, line)?;
                            break;
                        }
                    }
                }
            }
            self.check_len(out.len(), line)?;
        }
        Ok(())
    }

    pub(crate) fn entries(
        &mut self,
        entries: &[Entry],
        out: &mut Vec<ConfigEntry>,
    ) -> Result<(), Error> {
        for en in entries {
            match en {
                Entry::Kv(key, op, value, line) => {
                    let path = match key {
                        Key::Path(p) => p.clone(),
                        Key::Expr(e) => match self.expr(e)? {
                            Value::Str(s) => vec![s.to_string()],
                            other => {
                                return eval_err(
                                    format!(
                                        "a config key must be a string, got '{}'",
                                        other.type_name()
                                    ),
                                    *line,
                                );
                            }
                        },
                    };
                    let v = self.expr(value)?;
                    // Later entries see the keys set so far by name.
                    let frame = self.frame(*line)?;
                    apply_entry(frame, &path, *op, v.clone(), *line)?;
                    let n = frame.len();
                    self.check_len(n, *line)?;
                    out.push((path, *op, v, *line));
                }
                Entry::Unpack(e) => match self.expr(e)? {
                    Value::Dict(d) => {
                        for (k, v) in &d.map {
                            apply_entry(
                                self.frame(e.line)?,
                                std::slice::from_ref(k),
                                EntryOp::Union,
                                v.clone(),
                                e.line,
                            )?;
                            out.push((vec![k.clone()], EntryOp::Union, v.clone(), e.line));
                        }
                    }
                    Value::None | Value::Undefined => {}
                    other => {
                        return eval_err(
                            format!(
                                "only a dict can be unpacked with **, not {}",
                                other.type_name()
                            ),
                            e.line,
                        );
                    }
                },
                Entry::If(arms) => {
                    for (cond, body) in arms {
                        let take = match cond {
                            Some(c) => self.expr(c)?.truthy(),
                            None => true,
                        };
                        if take {
                            self.entries(body, out)?;
                            break;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Runs the `for` clauses of a comprehension from `i`, calling `f` for
    /// every binding that passes the filters.
    fn comp(
        &mut self,
        fors: &[CompFor],
        i: usize,
        f: &mut CompBody<'_>,
        out: &mut Vec<Value>,
    ) -> Result<(), Error> {
        let Some(cf) = fors.get(i) else {
            return f(self, out);
        };
        let coll = self.expr(&cf.iter)?;
        let line = cf.iter.line;
        let pairs = iter_pairs(&coll, line)?;
        'outer: for (a, b) in pairs {
            self.step(line)?;
            let scope = self.locals.last_mut().ok_or_else(|| Error::Eval {
                line,
                msg: "internal: comprehension without scope".into(),
            })?;
            if cf.vars.len() == 2 {
                scope.insert(cf.vars[0].clone(), a);
                scope.insert(cf.vars[1].clone(), b);
            } else {
                scope.insert(cf.vars[0].clone(), b_or_a(a, b, &coll));
            }
            for cond in &cf.ifs {
                if !self.expr(cond)?.truthy() {
                    continue 'outer;
                }
            }
            self.comp(fors, i + 1, f, out)?;
        }
        Ok(())
    }

    fn quantifier(
        &mut self,
        op: &str,
        vars: &[String],
        coll: &Value,
        body: &Expr,
        guard: Option<&Expr>,
        line: u32,
    ) -> Result<Value, Error> {
        let pairs = iter_pairs(coll, line)?;
        let mut list = Vec::new();
        let mut map = Map::new();
        self.locals.push(Map::new());
        let r = (|| {
            for (a, b) in pairs {
                self.step(line)?;
                let scope = self.locals.last_mut().ok_or_else(|| Error::Eval {
                    line,
                    msg: "internal: quantifier without scope".into(),
                })?;
                let item = b_or_a(a.clone(), b.clone(), coll);
                if vars.len() == 2 {
                    scope.insert(vars[0].clone(), a.clone());
                    scope.insert(vars[1].clone(), b.clone());
                } else {
                    scope.insert(vars[0].clone(), item.clone());
                }
                if let Some(g) = guard
                    && !self.expr(g)?.truthy()
                {
                    continue;
                }
                let v = self.expr(body)?;
                match op {
                    "all" if !v.truthy() => return Ok(Value::Bool(false)),
                    "any" if v.truthy() => return Ok(Value::Bool(true)),
                    "map" => list.push(v),
                    "filter" if v.truthy() => match coll {
                        Value::Dict(_) => {
                            if let Value::Str(k) = &a {
                                map.insert(k.to_string(), b.clone());
                            }
                        }
                        _ => list.push(item),
                    },
                    _ => {}
                }
            }
            Ok(match op {
                "all" => Value::Bool(true),
                "any" => Value::Bool(false),
                "filter" if matches!(coll, Value::Dict(_)) => Value::dict(map),
                _ => Value::list(list),
            })
        })();
        self.locals.pop();
        r
    }

    pub(crate) fn attr(&mut self, b: &Value, name: &str, line: u32) -> Result<Value, Error> {
        match b {
            Value::Dict(d) => Ok(match d.map.get(name) {
                Some(v) => v.clone(),
                None => {
                    if d.schema.is_none() && builtins::is_dict_method(name) {
                        Value::Func(Rc::new(Func::Builtin(
                            format!("dict.{name}"),
                            Some(b.clone()),
                        )))
                    } else {
                        Value::Undefined
                    }
                }
            }),
            Value::Str(_) => {
                if builtins::is_str_method(name) {
                    Ok(Value::Func(Rc::new(Func::Builtin(
                        format!("str.{name}"),
                        Some(b.clone()),
                    ))))
                } else {
                    eval_err(format!("str object has no attribute '{name}'"), line)
                }
            }
            Value::Module(m) if m.starts_with('@') => {
                let Some((id, path)) = self.module_id(m) else {
                    return eval_err(format!("module {m} is not loaded"), line);
                };
                match self.module_global(id, name) {
                    Some(v) => Ok(v.clone()),
                    None => eval_err(
                        format!("attribute '{name}' not found in 'module '{path}''"),
                        line,
                    ),
                }
            }
            Value::Module(m) => {
                let q = format!("{m}.{name}");
                if builtins::is_builtin(&q) {
                    Ok(Value::Func(Rc::new(Func::Builtin(q, None))))
                } else if let Some(v) = builtins::module_const(m, name) {
                    Ok(v)
                } else {
                    unsupported(format!("{m}.{name}"), line)
                }
            }
            Value::Schema(st) => unsupported(
                format!("members of a schema type ({}.{name})", st.name()),
                line,
            ),
            Value::None | Value::Undefined => {
                eval_err(format!("attribute '{name}' not found in 'NoneType'"), line)
            }
            other => eval_err(
                format!("'{}' object has no attribute '{name}'", other.type_name()),
                line,
            ),
        }
    }

    /// Calls a function value.
    pub fn call(
        &mut self,
        f: &Value,
        args: Vec<Value>,
        kwargs: Vec<(String, Value)>,
        line: u32,
    ) -> Result<Value, Error> {
        match f {
            Value::Func(func) => match &**func {
                Func::Builtin(name, recv) => {
                    builtins::call(self, name, recv.as_ref(), args, kwargs, line)
                }
                Func::Lambda(l, env, module) => {
                    self.in_module(*module, |it| it.call_lambda(l, env, args, kwargs, line))
                }
            },
            Value::Schema(st) => {
                let st = st.clone();
                self.instantiate(&st, args, kwargs, vec![], line)
            }
            other => eval_err(
                format!("'{}' object is not callable", other.type_name()),
                line,
            ),
        }
    }

    fn enter_call(&mut self, line: u32) -> Result<(), Error> {
        self.depth += 1;
        if self.depth > self.limits.max_call_depth
            || crate::stack::used_since(self.stack_base) > self.limits.max_stack_bytes
        {
            return Err(Error::Limit {
                line,
                msg: format!(
                    "calls nest deeper than {} levels (runaway recursion?)",
                    self.limits.max_call_depth
                ),
            });
        }
        Ok(())
    }

    fn call_lambda(
        &mut self,
        l: &Rc<Lambda>,
        env: &Rc<Map>,
        args: Vec<Value>,
        kwargs: Vec<(String, Value)>,
        line: u32,
    ) -> Result<Value, Error> {
        if args.len() > l.params.len() {
            return eval_err(
                format!(
                    "the function takes {} arguments but {} were given",
                    l.params.len(),
                    args.len()
                ),
                line,
            );
        }
        let mut frame = Map::new();
        let mut args = args.into_iter();
        for (name, ty, _) in &l.params {
            if let Some(v) = args.next() {
                let v = match ty {
                    Some(t) => self.convert(v, t, line, name)?,
                    None => v,
                };
                frame.insert(name.clone(), v);
            }
        }
        for (k, v) in kwargs {
            if !l.params.iter().any(|(n, _, _)| *n == k) {
                return eval_err(
                    format!("the function got an unexpected keyword argument '{k}'"),
                    line,
                );
            }
            frame.insert(k, v);
        }
        self.enter_call(line)?;
        let saved = std::mem::replace(&mut self.locals, vec![(**env).clone()]);
        let r = (|| {
            for (name, _, def) in &l.params {
                if !frame.contains_key(name) {
                    let v = match def {
                        Some(d) => self.expr(d)?,
                        None => Value::None,
                    };
                    frame.insert(name.clone(), v);
                }
            }
            self.locals.push(frame);
            let mut result = Value::None;
            for st in &l.body {
                if let StmtKind::Expr(e) = &st.kind {
                    self.step(st.line)?;
                    result = self.expr(e)?;
                } else {
                    self.stmt(st)?;
                    result = Value::None;
                }
            }
            if let Some(t) = &l.ret {
                result = self.convert(result, t, l.line, "return value")?;
            }
            Ok(result)
        })();
        self.locals = saved;
        self.depth -= 1;
        r
    }

    // ------------------------------------------------------------ schemas

    fn instantiate(
        &mut self,
        st: &Rc<SchemaType>,
        args: Vec<Value>,
        kwargs: Vec<(String, Value)>,
        cfg: Vec<ConfigEntry>,
        line: u32,
    ) -> Result<Value, Error> {
        if st.def.deprecated == Some(true) {
            return eval_err(format!("{} was deprecated", st.name()), line);
        }
        if st.def.is_mixin {
            return eval_err(format!("mixin {} cannot be instantiated", st.name()), line);
        }
        self.enter_call(line)?;
        let saved = std::mem::take(&mut self.locals);
        let r = self.in_module(st.module, |it| {
            it.instantiate_inner(st, args, kwargs, cfg, line)
        });
        self.locals = saved;
        self.depth -= 1;
        r
    }

    fn instantiate_inner(
        &mut self,
        st: &Rc<SchemaType>,
        args: Vec<Value>,
        kwargs: Vec<(String, Value)>,
        cfg: Vec<ConfigEntry>,
        line: u32,
    ) -> Result<Value, Error> {
        // The schemas whose bodies run, base first.
        let mut chain = Vec::new();
        let mut cur = Some(st.clone());
        while let Some(s) = cur {
            cur = s.parent.clone();
            chain.push(s);
        }
        chain.reverse();
        let mut ctx = SchemaCtx {
            cfg,
            declared: Vec::new(),
            index: None,
            set_keys: HashSet::new(),
        };
        // Parameters of the instantiated schema.
        let mut params = Map::new();
        let mut args = args.into_iter();
        for (name, ty, def) in &st.def.params {
            let v = match args.next() {
                Some(v) => v,
                None => match kwargs.iter().find(|(k, _)| k == name) {
                    Some((_, v)) => v.clone(),
                    None => match def {
                        Some(d) => self.expr(d)?,
                        None => Value::None,
                    },
                },
            };
            let v = match ty {
                Some(t) => self.convert(v, t, line, name)?,
                None => v,
            };
            params.insert(name.clone(), v);
        }
        self.locals.push(params);
        // The config's values, visible to the body before the statements
        // that set them run (KCL evaluates attributes lazily).
        let mut cfg_view = Map::new();
        for (path, op, v, l) in &ctx.cfg {
            apply_over_default(&mut cfg_view, path, *op, v.clone(), *l)?;
        }
        self.locals.push(cfg_view);
        self.locals.push(Map::new());
        // Names the bodies set, to tell a read before its statement apart.
        let mut body_names = HashSet::new();
        for s in &chain {
            for b in std::iter::once(s).chain(s.mixins.iter()) {
                collect_names(&b.def.body, &mut body_names);
            }
        }
        for s in &chain {
            let mut bodies = vec![s.clone()];
            bodies.extend(s.mixins.iter().cloned());
            for b in bodies {
                if let Some(ix) = &b.def.index {
                    ctx.index = Some(ix.clone());
                }
                let module = b.module;
                self.in_module(module, |it| {
                    for stmt in &b.def.body {
                        it.schema_stmt(stmt, &mut ctx)
                            .map_err(|e| forward_read(e, &body_names))?;
                    }
                    Ok(())
                })?;
            }
        }
        // Config keys the body did not declare.
        let cfg = std::mem::take(&mut ctx.cfg);
        for (path, op, v, l) in cfg {
            let key = path[0].clone();
            if ctx.set_keys.contains(&key) {
                continue;
            }
            let attrs = self.attrs_mut(line)?;
            if !attrs.contains_key(&key)
                && !key.starts_with('_')
                && ctx.index.is_none()
                && !ctx.declared.iter().any(|(n, _, _, _)| *n == key)
            {
                return eval_err(
                    format!("Cannot add member '{key}' to schema '{}'", st.name()),
                    l,
                );
            }
            let mut tmp = Map::new();
            if let Some(existing) = attrs.get(&key) {
                tmp.insert(key.clone(), existing.clone());
            }
            apply_over_default(&mut tmp, &path, op, v, l)?;
            if let Some(v) = tmp.swap_remove(&key) {
                let v = match &ctx.index {
                    Some((_, _, vt)) if !ctx.declared.iter().any(|(n, _, _, _)| *n == key) => {
                        self.convert(v, vt, l, &key)?
                    }
                    _ => v,
                };
                self.attrs_mut(line)?.insert(key, v);
            }
        }
        // Types of declared attributes.
        let declared = std::mem::take(&mut ctx.declared);
        for (name, ty, _, module) in &declared {
            let v = self
                .attrs_mut(line)?
                .get(name)
                .cloned()
                .unwrap_or(Value::Undefined);
            if !v.is_none_like() {
                let v = self.in_module(*module, |it| it.convert(v, ty, line, name))?;
                self.attrs_mut(line)?.insert(name.clone(), v);
            }
        }
        // Check blocks, base first.
        for s in &chain {
            let mut defs = vec![s.clone()];
            defs.extend(s.mixins.iter().cloned());
            for d in defs {
                self.in_module(d.module, |it| it.run_checks(&d))?;
            }
        }
        let attrs = self.locals.pop().unwrap_or_default();
        self.locals.pop();
        self.locals.pop();
        // Required attributes.
        for (name, _, optional, _) in &declared {
            if !optional && attrs.get(name).is_none_or(|v| v.is_none_like()) {
                return eval_err(
                    format!(
                        "attribute '{name}' of {} is required and can't be None or Undefined",
                        st.name()
                    ),
                    line,
                );
            }
        }
        let map: Map = attrs
            .into_iter()
            .filter(|(k, v)| !k.starts_with('_') && !matches!(v, Value::Func(_)))
            .collect();
        Ok(Value::Dict(Rc::new(Dict {
            map,
            ops: Default::default(),
            schema: Some(st.clone()),
        })))
    }

    /// Runs one schema's `check` block against the instance in scope.
    fn run_checks(&mut self, d: &SchemaType) -> Result<(), Error> {
        for c in &d.def.checks {
            if let Some(g) = &c.guard
                && !self.expr(g)?.truthy()
            {
                continue;
            }
            if !self.expr(&c.cond)?.truthy() {
                let msg = match &c.msg {
                    Some(m) => self.expr(m)?.to_kcl_string(),
                    None => String::new(),
                };
                return eval_err(
                    format!(
                        "Instance check failed: {}",
                        if msg.is_empty() {
                            "Check failed on the condition"
                        } else {
                            &msg
                        }
                    ),
                    c.line,
                );
            }
        }
        Ok(())
    }

    fn frame(&mut self, line: u32) -> Result<&mut Map, Error> {
        self.attrs_mut(line)
    }

    /// Unifies `old` with the value of `e`; when `e` instantiates a schema
    /// (`A {...}`), `old`'s entries join its config before the instance is
    /// made, so that values either side leaves out are not yet required.
    fn unify_with_expr(
        &mut self,
        old: &Value,
        e: &Expr,
        key: &str,
        line: u32,
    ) -> Result<Value, Error> {
        if let (ExprKind::SchemaInst(callee, args, kwargs, cfg), Value::Dict(d)) = (&e.kind, old)
            && let ExprKind::Config(es) = &cfg.kind
            && args.is_empty()
            && kwargs.is_empty()
            && let Some(st) = match self.expr(callee)? {
                Value::Schema(st) => Some(st),
                Value::Dict(inst) => inst.schema.clone(),
                _ => None,
            }
        {
            let mut entries: Vec<ConfigEntry> = d
                .map
                .iter()
                .map(|(k, v)| {
                    (
                        vec![k.clone()],
                        d.ops.get(k).copied().unwrap_or(EntryOp::Union),
                        v.clone(),
                        line,
                    )
                })
                .collect();
            self.locals.push(Map::new());
            let r = self.entries(es, &mut entries);
            self.locals.pop();
            r?;
            return self.instantiate(&st, vec![], vec![], entries, line);
        }
        let new = self.expr(e)?;
        unify(old, &new, key, line)
    }

    fn attrs_mut(&mut self, line: u32) -> Result<&mut Map, Error> {
        self.locals.last_mut().ok_or_else(|| Error::Eval {
            line,
            msg: "internal: schema without scope".into(),
        })
    }

    /// Sets an attribute while a schema body runs: the config's entries
    /// for it win over the body's value (`=`) or are unified with it (`:`).
    fn set_attr(
        &mut self,
        name: &str,
        base: Value,
        ctx: &mut SchemaCtx,
        line: u32,
    ) -> Result<(), Error> {
        let mut tmp = Map::new();
        tmp.insert(name.to_string(), base);
        for (path, op, v, l) in &ctx.cfg {
            if path[0] == name {
                apply_over_default(&mut tmp, path, *op, v.clone(), *l)?;
            }
        }
        ctx.set_keys.insert(name.to_string());
        let v = tmp.swap_remove(name).unwrap_or(Value::Undefined);
        self.attrs_mut(line)?.insert(name.to_string(), v);
        Ok(())
    }

    fn schema_stmt(&mut self, s: &Stmt, ctx: &mut SchemaCtx) -> Result<(), Error> {
        self.step(s.line)?;
        match &s.kind {
            StmtKind::Attr {
                name,
                optional,
                ty,
                value,
            } => {
                let existing = self.attrs_mut(s.line)?.get(name).cloned();
                let base = match (value, existing) {
                    // `a: A {...}` again: unified with the earlier value.
                    (Some((EntryOp::Union, e)), Some(old @ Value::Dict(_))) => {
                        self.unify_with_expr(&old, e, name, s.line)?
                    }
                    (Some((_, e)), _) => self.expr(e)?,
                    (None, existing) => existing.unwrap_or(Value::Undefined),
                };
                ctx.declared.retain(|(n, _, _, _)| n != name);
                ctx.declared
                    .push((name.clone(), ty.clone(), *optional, self.mods.current));
                self.set_attr(name, base, ctx, s.line)?;
                Ok(())
            }
            StmtKind::Assign(targets, _, value) => {
                let v = self.expr(value)?;
                for t in targets {
                    match t {
                        Target::Name(n) if n.starts_with('_') => {
                            self.attrs_mut(s.line)?.insert(n.clone(), v.clone());
                        }
                        Target::Name(n) => {
                            // The config's entries for the attribute are
                            // applied over the body's value again.
                            self.set_attr(n, v.clone(), ctx, s.line)?;
                        }
                        Target::Path(..) => {
                            return unsupported(
                                "assignment to an attribute path inside a schema",
                                s.line,
                            );
                        }
                    }
                }
                Ok(())
            }
            StmtKind::If(arms) => {
                for (cond, body) in arms {
                    let take = match cond {
                        Some(c) => self.expr(c)?.truthy(),
                        None => true,
                    };
                    if take {
                        for st in body {
                            self.schema_stmt(st, ctx)?;
                        }
                        break;
                    }
                }
                Ok(())
            }
            StmtKind::Deprecated(name, strict) => {
                let set = self
                    .attrs_mut(s.line)?
                    .get(name)
                    .is_some_and(|v| !v.is_none_like());
                if set && *strict {
                    return eval_err(format!("{name} was deprecated"), s.line);
                }
                Ok(())
            }
            StmtKind::Expr(e) if matches!(e.kind, ExprKind::Str(_)) => Ok(()),
            StmtKind::Schema(_) | StmtKind::Import(..) => {
                unsupported("a schema or import inside a schema", s.line)
            }
            _ => self.stmt(s),
        }
    }

    // ------------------------------------------------------------ types

    /// Checks `v` against `ty`, converting a dict to a schema instance
    /// where the type names a schema.
    pub(crate) fn convert(
        &mut self,
        v: Value,
        ty: &Type,
        line: u32,
        what: &str,
    ) -> Result<Value, Error> {
        if v.is_none_like() {
            return Ok(v);
        }
        match self.try_convert(&v, ty, line)? {
            Some(x) => Ok(x),
            None => eval_err(
                format!(
                    "expected {}, got {} for {what}",
                    type_text(ty),
                    v.type_name()
                ),
                line,
            ),
        }
    }

    fn try_convert(&mut self, v: &Value, ty: &Type, line: u32) -> Result<Option<Value>, Error> {
        Ok(match ty {
            Type::Any | Type::Func => Some(v.clone()),
            Type::Lit(lit) => {
                let ok = match (lit, v) {
                    (LitType::Str(a), Value::Str(b)) => **a == **b,
                    (LitType::Int(a), Value::Int(b)) => a == b,
                    (LitType::Float(a), Value::Float(b)) => a == b,
                    (LitType::Unit(a), Value::Unit(b, _)) => a == b,
                    (LitType::Bool(a), Value::Bool(b)) => a == b,
                    (LitType::None, Value::None) => true,
                    _ => false,
                };
                ok.then(|| v.clone())
            }
            Type::Union(alts) => {
                for a in alts {
                    if let Some(x) = self.try_convert(v, a, line)? {
                        return Ok(Some(x));
                    }
                }
                None
            }
            Type::List(inner) => match v {
                Value::List(l) => {
                    let mut out = Vec::with_capacity(l.len());
                    for x in l.iter() {
                        if x.is_none_like() {
                            out.push(x.clone());
                            continue;
                        }
                        match self.try_convert(x, inner, line)? {
                            Some(y) => out.push(y),
                            None => return Ok(None),
                        }
                    }
                    Some(Value::list(out))
                }
                _ => None,
            },
            Type::Dict(kt, vt) => match v {
                Value::Dict(d) if d.schema.is_none() || **kt == Type::Any => {
                    // Keys are strings: a key type must admit them.
                    let keys_ok = match &**kt {
                        Type::Any => true,
                        Type::Named(n) => n == "str",
                        Type::Lit(LitType::Str(_)) | Type::Union(_) => {
                            return unsupported(
                                "a dict type whose keys are literal or union types",
                                line,
                            );
                        }
                        _ => false,
                    };
                    if !keys_ok {
                        return Ok(None);
                    }
                    let mut out = Map::new();
                    for (k, x) in &d.map {
                        if x.is_none_like() {
                            out.insert(k.clone(), x.clone());
                            continue;
                        }
                        match self.try_convert(x, vt, line)? {
                            Some(y) => {
                                out.insert(k.clone(), y);
                            }
                            None => return Ok(None),
                        }
                    }
                    Some(Value::Dict(Rc::new(Dict {
                        map: out,
                        ops: d.ops.clone(),
                        schema: d.schema.clone(),
                    })))
                }
                _ => None,
            },
            Type::Named(n) => match (n.as_str(), v) {
                ("int", Value::Int(_)) | ("str", Value::Str(_)) | ("bool", Value::Bool(_)) => {
                    Some(v.clone())
                }
                ("float", Value::Float(_)) | ("float", Value::Int(_)) => Some(v.clone()),
                ("list", Value::List(_)) | ("dict", Value::Dict(_)) => Some(v.clone()),
                ("int" | "str" | "bool" | "float" | "list" | "dict", _) => None,
                _ if self.module.aliases.contains_key(n) => {
                    let alias = self.module.aliases.get(n).cloned().unwrap_or(Type::Any);
                    return self.try_convert(v, &alias, line);
                }
                _ => {
                    let target = match self.lookup_type(n, line)? {
                        Some(t) => t,
                        None => return unsupported(format!("type {n:?}"), line),
                    };
                    match v {
                        Value::Dict(d) => match &d.schema {
                            Some(s) if s.is_a(target.name()) => Some(v.clone()),
                            Some(_) => None,
                            None => {
                                let cfg = d
                                    .map
                                    .iter()
                                    .map(|(k, x)| {
                                        (vec![k.clone()], EntryOp::Union, x.clone(), line)
                                    })
                                    .collect();
                                Some(self.instantiate(&target, vec![], vec![], cfg, line)?)
                            }
                        },
                        _ => None,
                    }
                }
            },
        })
    }

    fn lookup_type(&mut self, n: &str, line: u32) -> Result<Option<Rc<SchemaType>>, Error> {
        let mut parts = n.split('.');
        let first = parts.next().unwrap_or_default();
        let mut v = match self.lookup(first, line) {
            Ok(v) => v,
            Err(_) => return Ok(None),
        };
        for p in parts {
            v = self.attr(&v, p, line)?;
        }
        Ok(match v {
            Value::Schema(s) => Some(s),
            _ => None,
        })
    }
}

struct SchemaCtx {
    /// The config's entries not yet applied to a declared attribute.
    cfg: Vec<ConfigEntry>,
    /// Declared attributes: name, type, optional.
    declared: Vec<(String, Type, bool, usize)>,
    /// The index signature in force.
    index: Option<(Option<String>, Type, Type)>,
    /// Attributes the body has set (with the config applied).
    set_keys: HashSet<String>,
}

fn type_text(t: &Type) -> String {
    match t {
        Type::Any => "any".into(),
        Type::Named(n) => n.clone(),
        Type::List(i) => format!("[{}]", type_text(i)),
        Type::Dict(k, v) => format!("{{{}:{}}}", type_text(k), type_text(v)),
        Type::Union(a) => a.iter().map(type_text).collect::<Vec<_>>().join(" | "),
        Type::Lit(l) => match l {
            LitType::Str(s) => format!("{s:?}"),
            LitType::Int(i) => i.to_string(),
            LitType::Float(f) | LitType::Unit(f) => f.to_string(),
            LitType::Bool(b) => {
                if *b {
                    "True".into()
                } else {
                    "False".into()
                }
            }
            LitType::None => "None".into(),
        },
        Type::Func => "function".into(),
    }
}

/// The (key or index, value) pairs a collection iterates over.
fn iter_pairs(coll: &Value, line: u32) -> Result<Vec<(Value, Value)>, Error> {
    Ok(match coll {
        Value::List(l) => l
            .iter()
            .enumerate()
            .map(|(i, v)| (Value::Int(i as i64), v.clone()))
            .collect(),
        Value::Dict(d) => d
            .map
            .iter()
            .map(|(k, v)| (Value::str(k.as_str()), v.clone()))
            .collect(),
        Value::Str(s) => s
            .chars()
            .enumerate()
            .map(|(i, c)| (Value::Int(i as i64), Value::str(c.to_string())))
            .collect(),
        Value::None | Value::Undefined => vec![],
        other => {
            return eval_err(
                format!("'{}' object is not iterable", other.type_name()),
                line,
            );
        }
    })
}

/// The single loop variable: a dict's key, a list's element.
fn b_or_a(a: Value, b: Value, coll: &Value) -> Value {
    if matches!(coll, Value::Dict(_)) { a } else { b }
}

/// `b[i]`.
pub(crate) fn index(b: &Value, i: &Value, line: u32) -> Result<Value, Error> {
    match (b, i) {
        (Value::List(l), Value::Int(n)) => {
            let len = l.len() as i64;
            let k = if *n < 0 { n + len } else { *n };
            if k < 0 || k >= len {
                return eval_err(format!("list index {n} out of range"), line);
            }
            Ok(l[k as usize].clone())
        }
        (Value::Str(s), Value::Int(n)) => {
            let chars: Vec<char> = s.chars().collect();
            let len = chars.len() as i64;
            let k = if *n < 0 { n + len } else { *n };
            if k < 0 || k >= len {
                return eval_err(format!("string index {n} out of range"), line);
            }
            Ok(Value::str(chars[k as usize].to_string()))
        }
        (Value::Dict(d), Value::Str(k)) => Ok(d.map.get(&**k).cloned().unwrap_or(Value::Undefined)),
        (Value::None | Value::Undefined, _) => {
            eval_err("'NoneType' object is not subscriptable", line)
        }
        (b, i) => eval_err(
            format!(
                "'{}' object cannot be indexed by '{}'",
                b.type_name(),
                i.type_name()
            ),
            line,
        ),
    }
}

/// Sets `path` under `cur` to `v` (assignment to `a.b[0] = v`).
fn set_path(cur: Value, path: &[Value], v: Value, line: u32) -> Result<Value, Error> {
    let Some((first, rest)) = path.split_first() else {
        return Ok(v);
    };
    match (cur, first) {
        (Value::Dict(d), Value::Str(k)) => {
            let mut d = (*d).clone();
            let inner = d.map.get(&**k).cloned().unwrap_or(Value::Undefined);
            let inner = if rest.is_empty() {
                v
            } else {
                set_path(inner, rest, v, line)?
            };
            d.map.insert(k.to_string(), inner);
            Ok(Value::Dict(Rc::new(d)))
        }
        (Value::List(l), Value::Int(i)) => {
            let mut l = (*l).clone();
            let len = l.len() as i64;
            let k = if *i < 0 { i + len } else { *i };
            if k < 0 || k >= len {
                return eval_err(format!("list index {i} out of range"), line);
            }
            let inner = std::mem::replace(&mut l[k as usize], Value::None);
            l[k as usize] = if rest.is_empty() {
                v
            } else {
                set_path(inner, rest, v, line)?
            };
            Ok(Value::list(l))
        }
        (c, k) => eval_err(
            format!("cannot set '{}' of '{}'", k.to_kcl_string(), c.type_name()),
            line,
        ),
    }
}

/// Applies one config entry (`path op v`) to `map`.
pub(crate) fn apply_entry(
    map: &mut Map,
    path: &[String],
    op: EntryOp,
    v: Value,
    line: u32,
) -> Result<(), Error> {
    apply_entry_as(map, path, op, v, line, false)
}

/// Applies a config entry over a schema's defaults: there `:` unifies
/// dicts but a conflicting value replaces the default instead of failing.
fn apply_over_default(
    map: &mut Map,
    path: &[String],
    op: EntryOp,
    v: Value,
    line: u32,
) -> Result<(), Error> {
    apply_entry_as(map, path, op, v, line, true)
}

fn apply_entry_as(
    map: &mut Map,
    path: &[String],
    op: EntryOp,
    v: Value,
    line: u32,
    over_default: bool,
) -> Result<(), Error> {
    let Some((key, rest)) = path.split_first() else {
        return Ok(());
    };
    if !rest.is_empty() {
        let existing = map.get(key).cloned();
        let mut inner = match existing {
            Some(Value::Dict(d)) => (*d).clone(),
            Some(v) if v.is_none_like() => Dict::default(),
            None => Dict::default(),
            Some(other) => {
                return eval_err(
                    format!(
                        "conflicting values on the attribute '{key}': {} is not a dict",
                        other.type_name()
                    ),
                    line,
                );
            }
        };
        apply_entry_as(&mut inner.map, rest, op, v, line, over_default)?;
        if rest.len() == 1 && op != EntryOp::Union {
            inner.ops.insert(rest[0].clone(), op);
        }
        map.insert(key.clone(), Value::Dict(Rc::new(inner)));
        return Ok(());
    }
    match op {
        EntryOp::Override => {
            map.insert(key.clone(), v);
        }
        EntryOp::Union => {
            let new = match map.get(key) {
                Some(old) => unify_as(old, &v, key, line, over_default)?,
                None => v,
            };
            map.insert(key.clone(), new);
        }
        EntryOp::Insert => {
            let new = match (map.get(key), &v) {
                (Some(Value::List(a)), Value::List(b)) => {
                    let mut l = (**a).clone();
                    l.extend(b.iter().cloned());
                    Value::list(l)
                }
                (None | Some(Value::None | Value::Undefined), Value::List(_)) => v,
                (_, other) => {
                    return eval_err(
                        format!(
                            "only a list can be inserted with +=, not {}",
                            other.type_name()
                        ),
                        line,
                    );
                }
            };
            map.insert(key.clone(), new);
        }
    }
    Ok(())
}

/// Unifies two values (`:`): dicts merge recursively, equal values stay,
/// anything else conflicts.
pub(crate) fn unify(a: &Value, b: &Value, key: &str, line: u32) -> Result<Value, Error> {
    unify_as(a, b, key, line, false)
}

fn unify_as(
    a: &Value,
    b: &Value,
    key: &str,
    line: u32,
    over_default: bool,
) -> Result<Value, Error> {
    match (a, b) {
        (Value::Dict(x), Value::Dict(y)) => {
            let mut out = (**x).clone();
            if out.schema.is_none() {
                out.schema = y.schema.clone();
            }
            for (k, v) in &y.map {
                let nv = match (y.ops.get(k), out.map.get(k)) {
                    (Some(EntryOp::Override), _) | (_, None) => v.clone(),
                    (Some(EntryOp::Insert), Some(Value::List(a))) => match v {
                        Value::List(b) => {
                            let mut l = (**a).clone();
                            l.extend(b.iter().cloned());
                            Value::list(l)
                        }
                        other => {
                            return eval_err(
                                format!(
                                    "only a list can be inserted with +=, not {}",
                                    other.type_name()
                                ),
                                line,
                            );
                        }
                    },
                    (_, Some(old)) => unify_as(old, v, k, line, over_default)?,
                };
                out.map.insert(k.clone(), nv);
                if let Some(op) = y.ops.get(k) {
                    out.ops.insert(k.clone(), *op);
                }
            }
            Ok(Value::Dict(Rc::new(out)))
        }
        (x, y) if x.is_none_like() => Ok(y.clone()),
        (x, y) if y.is_none_like() => Ok(x.clone()),
        (x, y) if equal(x, y) && x.type_name() == y.type_name() => Ok(x.clone()),
        (_, y) if over_default => Ok(y.clone()),
        (x, y) => eval_err(
            format!(
                "conflicting values on the attribute '{key}' between :\n    {}\nand\n    {}",
                x.to_kcl_string(),
                y.to_kcl_string()
            ),
            line,
        ),
    }
}

/// KCL's immutability of public top-level variables, checked before the
/// program runs as KCL's compiler does: a public name may be assigned at
/// one place only (branches of an `if` count as places).
fn check_immutable(prog: &[Stmt], seen: &mut HashMap<String, u32>) -> Result<(), Error> {
    for s in prog {
        let mut names: Vec<&str> = Vec::new();
        match &s.kind {
            StmtKind::Assign(targets, _, _) => {
                for t in targets {
                    match t {
                        Target::Name(n) => names.push(n),
                        Target::Path(..) => {}
                    }
                }
            }
            StmtKind::AugAssign(Target::Name(n), _, _) => names.push(n),
            // `a: A {...}` may be repeated: the values unify.
            StmtKind::Attr {
                name,
                value: Some((EntryOp::Union, _)),
                ..
            } => {
                let _ = name;
            }
            StmtKind::Attr { name, .. } => names.push(name),
            StmtKind::If(arms) => {
                for (_, body) in arms {
                    check_immutable(body, seen)?;
                }
            }
            _ => {}
        }
        for n in names {
            if n.starts_with('_') {
                continue;
            }
            if let Some(first) = seen.get(n) {
                let _ = first;
                return eval_err(
                    format!("Can not change the value of '{n}', because it was declared immutable"),
                    s.line,
                );
            }
            seen.insert(n.to_string(), s.line);
        }
    }
    Ok(())
}

/// The names a schema body sets (attributes and assignments, in `if`s too).
fn collect_names(body: &[Stmt], out: &mut HashSet<String>) {
    for s in body {
        match &s.kind {
            StmtKind::Attr { name, .. } => {
                out.insert(name.clone());
            }
            StmtKind::Assign(targets, _, _) => {
                for t in targets {
                    if let Target::Name(n) = t {
                        out.insert(n.clone());
                    }
                }
            }
            StmtKind::If(arms) => {
                for (_, b) in arms {
                    collect_names(b, out);
                }
            }
            _ => {}
        }
    }
}

/// A body that reads an attribute before the statement that sets it
/// relies on KCL's lazy evaluation of attributes, which xfn-kcl does not do.
fn forward_read(e: Error, names: &HashSet<String>) -> Error {
    if let Error::Eval { line, msg } = &e
        && let Some(name) = msg
            .strip_prefix("name '")
            .and_then(|m| m.strip_suffix("' is not defined"))
        && names.contains(name)
    {
        return Error::Unsupported {
            feature: format!(
                "reading schema attribute '{name}' before the statement that sets it (lazy evaluation)"
            ),
            line: *line,
        };
    }
    e
}
