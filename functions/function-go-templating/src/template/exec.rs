//! The executor of Go's `text/template` (Go 1.19 `exec.go`): walks a
//! template's tree over a value, with Go's truth, field, variable, call and
//! argument-checking rules and Go's error texts and error positions.

use std::collections::{HashMap, HashSet};
use std::fmt::Display;

use super::func::{Env, Func, FuncMap, Param};
use super::node::{Arg, Command, Control, ControlKind, List, Node, Number, Pipe};
use super::value::{Elem, Value, sprint_v};

/// Go's `maxExecDepth` of nested `{{template}}` calls.
pub const MAX_EXEC_DEPTH: usize = 100_000;
/// The largest output a template may produce (a guard against hostile
/// templates; Go has none).
pub const MAX_OUTPUT: usize = 64 << 20;
/// The most steps (nodes evaluated) one execution may take.
pub const MAX_STEPS: u64 = 50_000_000;
/// The deepest nesting of template calls xfn allows: each level uses native
/// stack, far less of it than Go's growable stacks allow.
pub const MAX_DEPTH: usize = 200;

/// The `missingkey` option.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissingKey {
    /// `default` / `invalid`: no value.
    #[default]
    Invalid,
    /// `zero`: the map's element type's zero value.
    Zero,
    /// `error`: execution stops.
    Error,
}

/// An execution error, already in Go's form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ExecError(pub String);

enum Flow {
    Err(ExecError),
    Break,
    Continue,
}

impl From<ExecError> for Flow {
    fn from(e: ExecError) -> Flow {
        Flow::Err(e)
    }
}

type R<T> = Result<T, Flow>;

/// The parsed templates of one text, with what executing them needs.
pub struct Set<'f> {
    /// The trees, by template name.
    pub trees: HashMap<String, List>,
    /// The parsed text (for error positions).
    pub text: String,
    /// The name positions are reported under (the parsed template's name).
    pub parse_name: String,
    /// The functions.
    pub funcs: &'f FuncMap,
    /// Names accepted at parse time that fail when called.
    pub unimplemented: &'f HashSet<&'static str>,
    /// The `missingkey` option.
    pub missing_key: MissingKey,
}

/// A node an error is reported at (Go's `state.node`).
#[derive(Clone, Copy)]
enum At<'a> {
    None,
    Node(&'a Node),
    Pipe(&'a Pipe),
    Cmd(&'a Command),
    Arg(&'a Arg),
}

impl At<'_> {
    fn pos(&self) -> usize {
        match self {
            At::None => 0,
            At::Node(Node::Action(p)) => p.pos,
            At::Node(Node::Control(c)) => c.pipe.pos,
            At::Node(Node::Template { pos, .. } | Node::Break(pos) | Node::Continue(pos)) => *pos,
            At::Node(Node::Text(_)) => 0,
            At::Pipe(p) => p.pos,
            At::Cmd(c) => c.pos,
            At::Arg(a) => a.pos(),
        }
    }

    fn context(&self) -> String {
        match self {
            At::None => String::new(),
            At::Node(n) => n.to_string(),
            At::Pipe(p) => p.to_string(),
            At::Cmd(c) => c.to_string(),
            At::Arg(a) => a.to_string(),
        }
    }
}

/// Executes the template `name` of `set` on `data`, writing into `out`.
pub fn execute(
    set: &Set<'_>,
    name: &str,
    data: Value,
    env: &mut dyn Env,
    out: &mut String,
) -> Result<(), ExecError> {
    let mut st = State {
        set,
        tmpl_name: name.to_string(),
        out,
        vars: vec![("$".to_string(), data.clone(), false)],
        dot_iface: false,
        depth: 0,
        at: At::None,
        steps: 0,
        env,
    };
    let Some(root) = set.trees.get(name) else {
        return Err(ExecError(format!(
            "template: no template {} associated with template {}",
            quote(name),
            quote(&set.parse_name)
        )));
    };
    match st.walk_list(&data, root) {
        Ok(()) => Ok(()),
        Err(Flow::Err(e)) => Err(e),
        Err(Flow::Break | Flow::Continue) => Ok(()),
    }
}

struct State<'a, 'o> {
    set: &'a Set<'a>,
    tmpl_name: String,
    out: &'o mut String,
    /// Variables: name, value, and whether the value is held in an
    /// `interface {}` (a range element), which Go's errors show.
    vars: Vec<(String, Value, bool)>,
    /// Whether dot is held in an `interface {}` (inside a range).
    dot_iface: bool,
    depth: usize,
    at: At<'a>,
    steps: u64,
    env: &'o mut dyn Env,
}

fn quote(s: &str) -> String {
    xfn_gocompat::gofmt::quote(s)
}

impl<'a> State<'a, '_> {
    fn errorf(&self, msg: impl Display) -> Flow {
        let name = &self.tmpl_name;
        let text = if let At::None = self.at {
            format!("template: {name}: {msg}")
        } else {
            let pos = self.at.pos().min(self.set.text.len());
            let before = &self.set.text.as_bytes()[..pos];
            let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
            let col = match before.iter().rposition(|&b| b == b'\n') {
                None => pos,
                Some(nl) => pos - (nl + 1),
            };
            format!(
                "template: {}:{line}:{col}: executing {} at <{}>: {msg}",
                self.set.parse_name,
                quote(name),
                self.at.context()
            )
        };
        Flow::Err(ExecError(text))
    }

    fn step(&mut self) -> R<()> {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Err(self.errorf(format!("template execution exceeded {MAX_STEPS} steps")));
        }
        Ok(())
    }

    fn walk_list(&mut self, dot: &Value, list: &'a List) -> R<()> {
        for n in list {
            self.walk(dot, n)?;
        }
        Ok(())
    }

    fn walk(&mut self, dot: &Value, node: &'a Node) -> R<()> {
        self.step()?;
        self.at = At::Node(node);
        match node {
            Node::Text(t) => {
                if self.out.len() + t.len() > MAX_OUTPUT {
                    return Err(self.errorf(format!("template output exceeds {MAX_OUTPUT} bytes")));
                }
                self.out.push_str(t);
            }
            Node::Action(pipe) => {
                let val = self.eval_pipeline(dot, pipe)?;
                if pipe.decl.is_empty() {
                    self.at = At::Node(node);
                    let s = match &val {
                        Value::Invalid => "<no value>".to_string(),
                        v => sprint_v(v),
                    };
                    if self.out.len() + s.len() > MAX_OUTPUT {
                        return Err(
                            self.errorf(format!("template output exceeds {MAX_OUTPUT} bytes"))
                        );
                    }
                    self.out.push_str(&s);
                }
            }
            Node::Control(c) => match c.kind {
                ControlKind::If | ControlKind::With => self.walk_if_or_with(dot, c)?,
                ControlKind::Range => self.walk_range(dot, node, c)?,
            },
            Node::Template { name, pipe, .. } => {
                let Some(tree) = self.set.trees.get(name) else {
                    return Err(self.errorf(format!("template {} not defined", quote(name))));
                };
                if self.depth >= MAX_DEPTH.min(MAX_EXEC_DEPTH) {
                    return Err(
                        self.errorf(format!("exceeded maximum template depth ({MAX_DEPTH})"))
                    );
                }
                let new_dot = match pipe {
                    Some(p) => self.eval_pipeline(dot, p)?,
                    None => Value::Invalid,
                };
                let saved_vars = std::mem::replace(
                    &mut self.vars,
                    vec![("$".to_string(), new_dot.clone(), false)],
                );
                let saved_name = std::mem::replace(&mut self.tmpl_name, name.clone());
                let saved_iface = std::mem::replace(&mut self.dot_iface, false);
                self.depth += 1;
                let r = self.walk_list(&new_dot, tree);
                self.depth -= 1;
                self.dot_iface = saved_iface;
                self.tmpl_name = saved_name;
                self.vars = saved_vars;
                r?;
            }
            Node::Break(_) => return Err(Flow::Break),
            Node::Continue(_) => return Err(Flow::Continue),
        }
        Ok(())
    }

    fn walk_if_or_with(&mut self, dot: &Value, c: &'a Control) -> R<()> {
        let mark = self.vars.len();
        let val = self.eval_pipeline(dot, &c.pipe)?;
        let r = if val.truth() {
            if c.kind == ControlKind::With {
                let saved = std::mem::replace(&mut self.dot_iface, false);
                let r = self.walk_list(&val, &c.list);
                self.dot_iface = saved;
                r
            } else {
                self.walk_list(dot, &c.list)
            }
        } else if let Some(e) = &c.else_list {
            self.walk_list(dot, e)
        } else {
            Ok(())
        };
        self.vars.truncate(mark);
        r
    }

    fn walk_range(&mut self, dot: &Value, node: &'a Node, c: &'a Control) -> R<()> {
        self.at = At::Node(node);
        let mark = self.vars.len();
        let val = self.eval_pipeline(dot, &c.pipe)?.indirect();
        let inner_mark = self.vars.len();
        let elem_iface = matches!(&val, Value::List(_, Elem::Any) | Value::Map(_, Elem::Any));
        let items: Vec<(Value, Value)> = match &val {
            Value::List(l, _) => l
                .iter()
                .enumerate()
                .map(|(i, v)| (Value::int(i as i64), v.clone()))
                .collect(),
            Value::Map(m, _) => m
                .borrow()
                .iter()
                .map(|(k, v)| (Value::str(k.as_str()), v.clone()))
                .collect(),
            Value::Invalid => Vec::new(),
            other => {
                let shown = sprint_v(other);
                return Err(self.errorf(format!("range can't iterate over {shown}")));
            }
        };
        let mut result = Ok(());
        if items.is_empty() {
            if let Some(e) = &c.else_list {
                result = self.walk_list(dot, e);
            }
        } else {
            for (index, elem) in items {
                if !c.pipe.decl.is_empty() {
                    self.set_top_var(1, elem.clone(), elem_iface);
                }
                if c.pipe.decl.len() > 1 {
                    self.set_top_var(2, index, false);
                }
                let saved = std::mem::replace(&mut self.dot_iface, elem_iface);
                let r = self.walk_list(&elem, &c.list);
                self.dot_iface = saved;
                self.vars.truncate(inner_mark);
                match r {
                    Ok(()) | Err(Flow::Continue) => {}
                    Err(Flow::Break) => break,
                    Err(e) => {
                        result = Err(e);
                        break;
                    }
                }
            }
        }
        self.vars.truncate(mark);
        result
    }

    fn set_top_var(&mut self, n: usize, v: Value, iface: bool) {
        let len = self.vars.len();
        if let Some(slot) = self.vars.get_mut(len - n) {
            slot.1 = v;
            slot.2 = iface;
        }
    }

    fn var_value(&self, name: &str) -> R<(Value, bool)> {
        for (n, v, iface) in self.vars.iter().rev() {
            if n == name {
                return Ok((v.clone(), *iface));
            }
        }
        Err(self.errorf(format!("undefined variable: {name}")))
    }

    fn set_var(&mut self, name: &str, v: Value) -> R<()> {
        for (n, slot, iface) in self.vars.iter_mut().rev() {
            if n == name {
                *slot = v;
                *iface = false;
                return Ok(());
            }
        }
        Err(self.errorf(format!("undefined variable: {name}")))
    }

    fn eval_pipeline(&mut self, dot: &Value, pipe: &'a Pipe) -> R<Value> {
        self.at = At::Pipe(pipe);
        let mut value: Option<Value> = None;
        for cmd in &pipe.cmds {
            let v = self.eval_command(dot, cmd, value.take())?;
            // An interface {} result: dig down to what it holds.
            value = Some(v.indirect());
        }
        let value = value.unwrap_or(Value::Invalid);
        for var in &pipe.decl {
            if pipe.is_assign {
                self.set_var(var, value.clone())?;
            } else {
                self.vars.push((var.clone(), value.clone(), false));
            }
        }
        Ok(value)
    }

    fn not_a_function(&self, args: &[Arg], final_: &Option<Value>) -> R<()> {
        if args.len() > 1 || final_.is_some() {
            return Err(self.errorf(format!("can't give argument to non-function {}", args[0])));
        }
        Ok(())
    }

    fn eval_command(&mut self, dot: &Value, cmd: &'a Command, final_: Option<Value>) -> R<Value> {
        self.step()?;
        let first = &cmd.args[0];
        match first {
            Arg::Field(_, ident) => {
                self.at = At::Arg(first);
                let iface = self.dot_iface;
                return self.eval_field_chain(dot.clone(), iface, first, ident, &cmd.args, final_);
            }
            Arg::Chain(_, node, fields) => {
                return self.eval_chain(dot, first, node, fields, &cmd.args, final_);
            }
            Arg::Identifier(_, name) => {
                return self.eval_function(dot, first, name, At::Cmd(cmd), &cmd.args, final_);
            }
            Arg::Pipe(p) => {
                self.not_a_function(&cmd.args, &final_)?;
                return self.eval_pipeline(dot, p);
            }
            Arg::Variable(_, ident) => {
                return self.eval_variable(first, ident, &cmd.args, final_);
            }
            _ => {}
        }
        self.at = At::Arg(first);
        self.not_a_function(&cmd.args, &final_)?;
        match first {
            Arg::Bool(_, b) => Ok(Value::Bool(*b)),
            Arg::Dot(_) => Ok(dot.clone()),
            Arg::Nil(_) => Err(self.errorf("nil is not a command")),
            Arg::Number(_, n) => self.ideal_constant(first, n),
            Arg::String(_, _, s) => Ok(Value::str(s.as_str())),
            _ => Err(self.errorf(format!(
                "can't evaluate command {}",
                quote(&first.to_string())
            ))),
        }
    }

    fn ideal_constant(&mut self, node: &'a Arg, n: &Number) -> R<Value> {
        self.at = At::Arg(node);
        let t = &n.text;
        let is_hex_int = t.len() > 2
            && t.starts_with('0')
            && matches!(t.as_bytes()[1], b'x' | b'X')
            && !t.contains(['p', 'P']);
        let is_rune = t.starts_with('\'');
        if n.is_float && !is_hex_int && !is_rune && t.contains(['.', 'e', 'E', 'p', 'P']) {
            return Ok(Value::Float(n.float));
        }
        if n.is_int {
            return Ok(Value::int(n.int));
        }
        if n.is_uint {
            return Err(self.errorf(format!("{t} overflows int")));
        }
        Ok(Value::Invalid)
    }

    fn eval_chain(
        &mut self,
        dot: &Value,
        chain: &'a Arg,
        node: &'a Arg,
        fields: &'a [String],
        args: &'a [Arg],
        final_: Option<Value>,
    ) -> R<Value> {
        self.at = At::Arg(chain);
        if let Arg::Nil(_) = node {
            return Err(self.errorf(format!("indirection through explicit nil in {chain}")));
        }
        let pipe = self.eval_arg(dot, Param::Any, node, true)?;
        self.eval_field_chain(pipe, false, chain, fields, args, final_)
    }

    fn eval_variable(
        &mut self,
        node: &'a Arg,
        ident: &'a [String],
        args: &'a [Arg],
        final_: Option<Value>,
    ) -> R<Value> {
        self.at = At::Arg(node);
        let (value, iface) = self.var_value(&ident[0])?;
        if ident.len() == 1 {
            self.not_a_function(args, &final_)?;
            return Ok(value);
        }
        self.eval_field_chain(value, iface, node, &ident[1..], args, final_)
    }

    fn eval_field_chain(
        &mut self,
        mut receiver: Value,
        mut iface: bool,
        node: &'a Arg,
        ident: &'a [String],
        args: &'a [Arg],
        final_: Option<Value>,
    ) -> R<Value> {
        let n = ident.len();
        for field in &ident[..n - 1] {
            let next_iface = matches!(receiver, Value::Map(_, Elem::Any));
            receiver = self.eval_field(field, node, false, receiver, iface)?;
            iface = next_iface;
        }
        let has_args = args.len() > 1 || final_.is_some();
        self.eval_field(&ident[n - 1], node, has_args, receiver, iface)
    }

    fn eval_field(
        &mut self,
        field: &str,
        _node: &'a Arg,
        has_args: bool,
        receiver: Value,
        iface: bool,
    ) -> R<Value> {
        match receiver {
            Value::Invalid => {
                if self.set.missing_key == MissingKey::Error {
                    return Err(self.errorf(format!("nil data; no entry for key {}", quote(field))));
                }
                Ok(Value::Invalid)
            }
            Value::Nil => {
                Err(self.errorf(format!("nil pointer evaluating interface {{}}.{field}")))
            }
            Value::Map(m, elem) => {
                if has_args {
                    return Err(self.errorf(format!("{field} is not a method but has arguments")));
                }
                let got = m.borrow().get(field).cloned();
                match got {
                    Some(v) => Ok(v),
                    None => match self.set.missing_key {
                        MissingKey::Invalid => Ok(Value::Invalid),
                        MissingKey::Zero => Ok(match elem {
                            Elem::Any => Value::Nil,
                            Elem::Str => Value::str(""),
                            Elem::Int | Elem::Byte => Value::int(0),
                            Elem::Bytes => Value::bytes(&[]),
                            Elem::List => Value::list(Vec::new()),
                        }),
                        MissingKey::Error => {
                            Err(self.errorf(format!("map has no entry for key {}", quote(field))))
                        }
                    },
                }
            }
            Value::Struct(s) => {
                if let Some((_, v)) = s.fields.iter().find(|(n, _)| *n == field) {
                    if has_args {
                        return Err(self.errorf(format!(
                            "{field} has arguments but cannot be invoked as function"
                        )));
                    }
                    return Ok(v.clone());
                }
                let t = if iface { "interface {}" } else { s.type_name };
                Err(self.errorf(format!("can't evaluate field {field} in type {t}")))
            }
            Value::Time(t) => match crate::gotime::method(&t, field) {
                Some(v) if !has_args => Ok(v),
                _ => Err(self.errorf(format!(
                    "the method {field} of time.Time is not supported by xfn's port"
                ))),
            },
            other => {
                let t = if iface {
                    "interface {}"
                } else {
                    other.type_name()
                };
                Err(self.errorf(format!("can't evaluate field {field} in type {t}")))
            }
        }
    }

    fn eval_function(
        &mut self,
        dot: &Value,
        ident: &'a Arg,
        name: &str,
        cmd: At<'a>,
        args: &'a [Arg],
        final_: Option<Value>,
    ) -> R<Value> {
        self.at = At::Arg(ident);
        if self.set.unimplemented.contains(name) {
            self.at = cmd;
            return Err(self.errorf(format!(
                "error calling {name}: {}",
                super::func::unimplemented(name)
            )));
        }
        let Some(func) = self.set.funcs.get(name).copied() else {
            return Err(self.errorf(format!("{} is not a defined function", quote(name))));
        };
        self.eval_call(dot, func, name, cmd, &args[1..], final_)
    }

    fn eval_call(
        &mut self,
        dot: &Value,
        func: Func,
        name: &str,
        node: At<'a>,
        args: &'a [Arg],
        final_: Option<Value>,
    ) -> R<Value> {
        let num_in = args.len() + usize::from(final_.is_some());
        let nparams = func.params.len();
        if func.variadic.is_some() {
            if num_in < nparams {
                return Err(self.errorf(format!(
                    "wrong number of args for {name}: want at least {nparams} got {}",
                    args.len()
                )));
            }
        } else if num_in != nparams {
            return Err(self.errorf(format!(
                "wrong number of args for {name}: want {nparams} got {num_in}"
            )));
        }
        // and / or short-circuit.
        if name == "and" || name == "or" {
            let is_or = name == "or";
            let mut v = Value::Invalid;
            for arg in args {
                v = self.eval_arg(dot, Param::Value, arg, false)?;
                if v.clone().indirect().truth() == is_or {
                    return Ok(v);
                }
            }
            if let Some(f) = final_ {
                v = self.validate_type(f, Param::Value)?;
            }
            return Ok(v);
        }
        let mut argv = Vec::with_capacity(num_in);
        let mut i = 0;
        while i < nparams && i < args.len() {
            argv.push(self.eval_arg(dot, func.params[i], &args[i], false)?);
            i += 1;
        }
        if let Some(rest) = func.variadic {
            while i < args.len() {
                argv.push(self.eval_arg(dot, rest, &args[i], false)?);
                i += 1;
            }
        }
        if let Some(f) = final_ {
            let t = if func.variadic.is_some() && num_in > nparams {
                func.variadic.unwrap_or(Param::Any)
            } else {
                func.params[num_in - 1]
            };
            argv.push(self.validate_type(f, t)?);
        }
        match (func.call)(self.env_mut(), argv) {
            Ok(v) => {
                // What a call builds counts as work, so that a loop doubling
                // a string or copying a growing list meets the step bound
                // long before memory runs out.
                let size = match &v {
                    Value::Str(s) => s.len(),
                    Value::List(l, _) => l.len() * 16,
                    // Maps are shared, not copied (`set` changes one in place).
                    _ => 0,
                };
                if size > MAX_OUTPUT {
                    self.at = node;
                    return Err(self.errorf(format!(
                        "error calling {name}: its result is larger than {MAX_OUTPUT} bytes"
                    )));
                }
                self.steps += (size / 16) as u64;
                if self.steps > MAX_STEPS {
                    return Err(
                        self.errorf(format!("template execution exceeded {MAX_STEPS} steps"))
                    );
                }
                Ok(v)
            }
            Err(e) => {
                self.at = node;
                Err(self.errorf(format!("error calling {name}: {e}")))
            }
        }
    }

    fn env_mut(&mut self) -> &mut dyn Env {
        self
    }

    fn validate_type(&self, value: Value, typ: Param) -> R<Value> {
        if let Value::Invalid = value {
            if let Some(z) = typ.zero() {
                return Ok(z);
            }
            return Err(self.errorf(format!("invalid value; expected {}", typ.type_name())));
        }
        if typ.accepts(&value) {
            return Ok(value);
        }
        Err(self.errorf(format!(
            "wrong type for value; expected {}; got {}",
            typ.type_name(),
            value.type_name()
        )))
    }

    /// Go's `evalArg`; `untyped` is the `evalArg(dot, nil, n)` of a chain.
    fn eval_arg(&mut self, dot: &Value, typ: Param, n: &'a Arg, untyped: bool) -> R<Value> {
        self.at = At::Arg(n);
        let check = |s: &mut Self, v: Value| -> R<Value> {
            if untyped {
                return Ok(match v {
                    Value::Invalid => Value::Nil,
                    v => v,
                });
            }
            s.validate_type(v, typ)
        };
        match n {
            Arg::Dot(_) => return check(self, dot.clone()),
            Arg::Nil(_) => {
                if untyped || typ.can_be_nil() {
                    return Ok(typ.zero().unwrap_or(Value::Nil));
                }
                return Err(self.errorf(format!("cannot assign nil to {}", typ.type_name())));
            }
            Arg::Field(_, ident) => {
                let iface = self.dot_iface;
                let v = self.eval_field_chain(
                    dot.clone(),
                    iface,
                    n,
                    ident,
                    std::slice::from_ref(n),
                    None,
                )?;
                return check(self, v);
            }
            Arg::Variable(_, ident) => {
                let v = self.eval_variable(n, ident, &[], None)?;
                return check(self, v);
            }
            Arg::Pipe(p) => {
                let v = self.eval_pipeline(dot, p)?;
                return check(self, v);
            }
            Arg::Identifier(_, name) => {
                let v =
                    self.eval_function(dot, n, name, At::Arg(n), std::slice::from_ref(n), None)?;
                return check(self, v);
            }
            Arg::Chain(_, node, fields) => {
                let v = self.eval_chain(dot, n, node, fields, &[], None)?;
                return check(self, v);
            }
            _ => {}
        }
        let typ = if untyped { Param::Any } else { typ };
        match typ {
            Param::Bool => match n {
                Arg::Bool(_, b) => Ok(Value::Bool(*b)),
                _ => Err(self.errorf(format!("expected bool; found {n}"))),
            },
            Param::Float64 => match n {
                Arg::Number(_, num) if num.is_float => Ok(Value::Float(num.float)),
                _ => Err(self.errorf(format!("expected float; found {n}"))),
            },
            Param::Int | Param::Int64 => match n {
                Arg::Number(_, num) if num.is_int => Ok(if typ == Param::Int {
                    Value::int(num.int)
                } else {
                    Value::int64(num.int)
                }),
                _ => Err(self.errorf(format!("expected integer; found {n}"))),
            },
            Param::Str => match n {
                Arg::String(_, _, s) => Ok(Value::str(s.as_str())),
                _ => Err(self.errorf(format!("expected string; found {n}"))),
            },
            Param::Any | Param::Value => match n {
                Arg::Bool(_, b) => Ok(Value::Bool(*b)),
                Arg::Number(_, num) => self.ideal_constant(n, num),
                Arg::String(_, _, s) => Ok(Value::str(s.as_str())),
                _ => Err(self.errorf(format!(
                    "can't handle assignment of {n} to empty interface argument"
                ))),
            },
            _ => Err(self.errorf(format!(
                "can't handle {n} for arg of type {}",
                typ.type_name()
            ))),
        }
    }
}

impl Env for State<'_, '_> {
    fn execute_named(&mut self, name: &str, data: Value) -> Result<String, String> {
        let Some(tree) = self.set.trees.get(name) else {
            return Err(format!(
                "template: no template {} associated with template {}",
                quote(name),
                quote(&self.set.parse_name)
            ));
        };
        if self.depth >= MAX_DEPTH {
            return Err(format!("exceeded maximum template depth ({MAX_DEPTH})"));
        }
        let mut buf = String::new();
        let saved_out = std::mem::take(self.out);
        let saved_vars =
            std::mem::replace(&mut self.vars, vec![("$".to_string(), data.clone(), false)]);
        let saved_name = std::mem::replace(&mut self.tmpl_name, name.to_string());
        let saved_at = self.at;
        let saved_iface = std::mem::replace(&mut self.dot_iface, false);
        self.depth += 1;
        let r = self.walk_list(&data, tree);
        self.depth -= 1;
        self.dot_iface = saved_iface;
        std::mem::swap(self.out, &mut buf);
        *self.out = saved_out;
        self.vars = saved_vars;
        self.tmpl_name = saved_name;
        self.at = saved_at;
        match r {
            Ok(()) | Err(Flow::Break | Flow::Continue) => Ok(buf),
            Err(Flow::Err(e)) => Err(e.0),
        }
    }

    fn execute_text(&mut self, _text: &str, _data: Value) -> Result<String, String> {
        Err(super::func::unimplemented("tpl"))
    }

    fn random(&mut self) -> u64 {
        self.env.random()
    }

    fn now_nanos(&mut self) -> i128 {
        self.env.now_nanos()
    }
}
