//! The parse tree of a Go template, and each node's `String()` as Go prints
//! it in error messages.

use std::fmt::{self, Display, Formatter, Write};

/// A list of nodes (a template's body, or the body of a control).
pub type List = Vec<Node>;

/// A node of a template body.
#[derive(Debug, Clone)]
pub enum Node {
    /// Plain text.
    Text(String),
    /// `{{pipeline}}`.
    Action(Pipe),
    /// `{{if}}`, `{{with}}` or `{{range}}`.
    Control(Box<Control>),
    /// `{{template "name" pipeline}}`.
    Template {
        /// Byte offset.
        pos: usize,
        /// The template's name.
        name: String,
        /// The data passed, if any.
        pipe: Option<Pipe>,
    },
    /// `{{break}}`
    Break(usize),
    /// `{{continue}}`
    Continue(usize),
}

/// Which control an [`Control`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControlKind {
    /// `if`
    If,
    /// `with`
    With,
    /// `range`
    Range,
}

/// `{{if}}`, `{{with}}` or `{{range}}` with its lists.
#[derive(Debug, Clone)]
pub struct Control {
    /// Which control.
    pub kind: ControlKind,
    /// The pipeline tested or ranged over.
    pub pipe: Pipe,
    /// The body.
    pub list: List,
    /// The `else` body.
    pub else_list: Option<List>,
}

/// A pipeline with its optional declarations.
#[derive(Debug, Clone)]
pub struct Pipe {
    /// Byte offset.
    pub pos: usize,
    /// `=` rather than `:=`.
    pub is_assign: bool,
    /// The variables declared or assigned.
    pub decl: Vec<String>,
    /// The commands.
    pub cmds: Vec<Command>,
}

/// One command of a pipeline: an operand and its arguments.
#[derive(Debug, Clone)]
pub struct Command {
    /// Byte offset.
    pub pos: usize,
    /// The operands; the first one is the function, field or value.
    pub args: Vec<Arg>,
}

/// A parsed number constant (Go's `NumberNode`).
#[derive(Debug, Clone, Default)]
pub struct Number {
    /// The original text.
    pub text: String,
    /// Fits `int64`.
    pub is_int: bool,
    /// Fits `uint64`.
    pub is_uint: bool,
    /// Is a float.
    pub is_float: bool,
    /// The `int64` value.
    pub int: i64,
    /// The `float64` value.
    pub float: f64,
}

/// An operand.
#[derive(Debug, Clone)]
pub enum Arg {
    /// A function name.
    Identifier(usize, String),
    /// `.`
    Dot(usize),
    /// `nil`
    Nil(usize),
    /// `$x.a.b`: the variable name then the fields.
    Variable(usize, Vec<String>),
    /// `.a.b`
    Field(usize, Vec<String>),
    /// `true` / `false`
    Bool(usize, bool),
    /// A number.
    Number(usize, Box<Number>),
    /// A string: its quoted form and its value.
    String(usize, String, String),
    /// `(pipeline)`
    Pipe(Box<Pipe>),
    /// `(pipeline).a.b`, or `x.a` on another term.
    Chain(usize, Box<Arg>, Vec<String>),
}

impl Arg {
    /// The operand's byte offset.
    pub fn pos(&self) -> usize {
        match self {
            Arg::Identifier(p, _)
            | Arg::Dot(p)
            | Arg::Nil(p)
            | Arg::Variable(p, _)
            | Arg::Field(p, _)
            | Arg::Bool(p, _)
            | Arg::Number(p, _)
            | Arg::String(p, _, _)
            | Arg::Chain(p, _, _) => *p,
            Arg::Pipe(p) => p.pos,
        }
    }
}

impl Display for Arg {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Arg::Identifier(_, s) => f.write_str(s),
            Arg::Dot(_) => f.write_str("."),
            Arg::Nil(_) => f.write_str("nil"),
            Arg::Variable(_, ident) => f.write_str(&ident.join(".")),
            Arg::Field(_, ident) => {
                for id in ident {
                    write!(f, ".{id}")?;
                }
                Ok(())
            }
            Arg::Bool(_, b) => write!(f, "{b}"),
            Arg::Number(_, n) => f.write_str(&n.text),
            Arg::String(_, quoted, _) => f.write_str(quoted),
            Arg::Pipe(p) => write!(f, "{p}"),
            Arg::Chain(_, node, fields) => {
                if let Arg::Pipe(p) = node.as_ref() {
                    write!(f, "({p})")?;
                } else {
                    write!(f, "{node}")?;
                }
                for field in fields {
                    write!(f, ".{field}")?;
                }
                Ok(())
            }
        }
    }
}

impl Display for Command {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        for (i, arg) in self.args.iter().enumerate() {
            if i > 0 {
                f.write_char(' ')?;
            }
            if let Arg::Pipe(p) = arg {
                write!(f, "({p})")?;
            } else {
                write!(f, "{arg}")?;
            }
        }
        Ok(())
    }
}

impl Display for Pipe {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if !self.decl.is_empty() {
            f.write_str(&self.decl.join(", "))?;
            f.write_str(if self.is_assign { " = " } else { " := " })?;
        }
        for (i, c) in self.cmds.iter().enumerate() {
            if i > 0 {
                f.write_str(" | ")?;
            }
            write!(f, "{c}")?;
        }
        Ok(())
    }
}

fn write_list(f: &mut Formatter<'_>, list: &List) -> fmt::Result {
    for n in list {
        write!(f, "{n}")?;
    }
    Ok(())
}

impl Display for Node {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Node::Text(t) => f.write_str(t),
            Node::Action(p) => write!(f, "{{{{{p}}}}}"),
            Node::Control(c) => {
                let name = match c.kind {
                    ControlKind::If => "if",
                    ControlKind::With => "with",
                    ControlKind::Range => "range",
                };
                write!(f, "{{{{{name} {}}}}}", c.pipe)?;
                write_list(f, &c.list)?;
                if let Some(e) = &c.else_list {
                    f.write_str("{{else}}")?;
                    write_list(f, e)?;
                }
                f.write_str("{{end}}")
            }
            Node::Template { name, pipe, .. } => {
                let q = xfn_gocompat::gofmt::quote(name);
                match pipe {
                    None => write!(f, "{{{{template {q}}}}}"),
                    Some(p) => write!(f, "{{{{template {q} {p}}}}}"),
                }
            }
            Node::Break(_) => f.write_str("{{break}}"),
            Node::Continue(_) => f.write_str("{{continue}}"),
        }
    }
}
