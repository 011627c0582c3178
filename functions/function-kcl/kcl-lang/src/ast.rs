//! The syntax tree.

use std::rc::Rc;

/// An expression with its line.
#[derive(Debug, Clone)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Its line.
    pub line: u32,
}

/// A part of a string literal after parsing.
#[derive(Debug, Clone)]
pub enum StrSeg {
    /// Literal text.
    Lit(String),
    /// An interpolated expression and its format spec.
    Expr(Expr, Option<String>),
}

/// The kinds of expressions.
#[derive(Debug, Clone)]
pub enum ExprKind {
    /// A name.
    Name(String),
    /// `None`.
    None,
    /// `Undefined`.
    Undefined,
    /// `True` / `False`.
    Bool(bool),
    /// An integer literal.
    Int(i64),
    /// A float literal.
    Float(f64),
    /// A number with a unit suffix (`1Ki`).
    Unit(i64, String),
    /// A string literal, maybe interpolated.
    Str(Vec<StrSeg>),
    /// A list literal.
    List(Vec<ListItem>),
    /// A config (dict) literal.
    Config(Vec<Entry>),
    /// `[e for ...]`.
    ListComp(Box<Expr>, Vec<CompFor>),
    /// `{k: v for ...}`.
    DictComp(Box<Expr>, Box<Expr>, Vec<CompFor>),
    /// `a.b` (`?.` when the flag is set).
    Attr(Box<Expr>, String, bool),
    /// `a[i]` (`?[` when the flag is set).
    Index(Box<Expr>, Box<Expr>, bool),
    /// `a[lo:hi:step]`.
    Slice(Box<Expr>, [Option<Box<Expr>>; 3], bool),
    /// A call with positional and keyword arguments.
    Call(Box<Expr>, Vec<Expr>, Vec<(String, Expr)>),
    /// A unary operator.
    Unary(&'static str, Box<Expr>),
    /// A binary operator (`and`, `or`, arithmetic, comparison, `in`, `not in`, `is`, `is not`).
    Binary(&'static str, Box<Expr>, Box<Expr>),
    /// A chain of comparisons `a < b < c`.
    Compare(Box<Expr>, Vec<(&'static str, Expr)>),
    /// `a if cond else b`.
    IfElse(Box<Expr>, Box<Expr>, Box<Expr>),
    /// A lambda.
    Lambda(Rc<Lambda>),
    /// `Name {config}` or `Name(args) {config}`: a schema instantiation.
    SchemaInst(Box<Expr>, Vec<Expr>, Vec<(String, Expr)>, Box<Expr>),
    /// `e as T`: a checked conversion.
    As(Box<Expr>, Type),
    /// `all/any/map/filter x[, y] in e { body }`.
    Quant(
        &'static str,
        Vec<String>,
        Box<Expr>,
        Box<Expr>,
        Option<Box<Expr>>,
    ),
}

/// An item of a list literal.
#[derive(Debug, Clone)]
pub enum ListItem {
    /// A value.
    Expr(Expr),
    /// `*e`.
    Star(Expr),
    /// `if cond: items (elif ...)* (else: items)?`.
    If(Vec<(Option<Expr>, Vec<ListItem>)>),
}

/// The operator of a config entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryOp {
    /// `:`: unify.
    Union,
    /// `=`: override.
    Override,
    /// `+=`: insert (append to a list).
    Insert,
}

/// A config key: a path of names (`a.b.c`) or a computed key.
#[derive(Debug, Clone)]
pub enum Key {
    /// `a.b.c` or a string literal key.
    Path(Vec<String>),
    /// An expression (a string with interpolation, `(expr)`, a number).
    Expr(Expr),
}

/// An entry of a config literal.
#[derive(Debug, Clone)]
pub enum Entry {
    /// `key op value`.
    Kv(Key, EntryOp, Expr, u32),
    /// `**e`.
    Unpack(Expr),
    /// `if cond: entries (elif ...)* (else: entries)?`.
    If(Vec<(Option<Expr>, Vec<Entry>)>),
}

/// A `for` clause of a comprehension.
#[derive(Debug, Clone)]
pub struct CompFor {
    /// The loop variables (one or two).
    pub vars: Vec<String>,
    /// The iterated expression.
    pub iter: Expr,
    /// The `if` filters.
    pub ifs: Vec<Expr>,
}

/// A type annotation.
#[derive(Debug, Clone, PartialEq)]
pub enum Type {
    /// `any`.
    Any,
    /// A named type: `int`, `str`, a schema name (maybe dotted).
    Named(String),
    /// `[T]`.
    List(Box<Type>),
    /// `{K:V}`.
    Dict(Box<Type>, Box<Type>),
    /// `A | B`.
    Union(Vec<Type>),
    /// A literal type: `"a"`, `1`, `True`.
    Lit(LitType),
    /// A function type `(A) -> B`.
    Func,
}

/// A literal type's value.
#[derive(Debug, Clone, PartialEq)]
pub enum LitType {
    /// A string.
    Str(String),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A number multiplier, by value.
    Unit(f64),
    /// A bool.
    Bool(bool),
    /// None.
    None,
}

/// A parameter: name, type, default.
pub type Param = (String, Option<Type>, Option<Expr>);

/// A lambda's definition.
#[derive(Debug, Clone)]
pub struct Lambda {
    /// Parameters: name, type, default.
    pub params: Vec<(String, Option<Type>, Option<Expr>)>,
    /// The declared return type.
    pub ret: Option<Type>,
    /// The body; the value of its last expression statement is returned.
    pub body: Vec<Stmt>,
    /// Its line.
    pub line: u32,
}

/// A schema's definition.
#[derive(Debug, Clone)]
pub struct SchemaDef {
    /// Its name.
    pub name: String,
    /// The parent schema's name.
    pub parent: Option<Expr>,
    /// Mixins.
    pub mixins: Vec<Expr>,
    /// Its parameters.
    pub params: Vec<(String, Option<Type>, Option<Expr>)>,
    /// The body statements (attributes and others).
    pub body: Vec<Stmt>,
    /// `[key: K]: V`: the index signature (key name, key type, value type).
    pub index: Option<(Option<String>, Type, Type)>,
    /// The check block: conditions, guards and messages.
    pub checks: Vec<Check>,
    /// Its line.
    pub line: u32,
    /// Whether it is a `mixin`.
    pub is_mixin: bool,
    /// `@deprecated`: whether using it is an error (`strict`, the default).
    pub deprecated: Option<bool>,
}

/// A condition of a check block.
#[derive(Debug, Clone)]
pub struct Check {
    /// The condition.
    pub cond: Expr,
    /// `if guard`.
    pub guard: Option<Expr>,
    /// The message.
    pub msg: Option<Expr>,
    /// Its line.
    pub line: u32,
}

/// A statement with its line.
#[derive(Debug, Clone)]
pub struct Stmt {
    /// What it is.
    pub kind: StmtKind,
    /// Its line.
    pub line: u32,
}

/// The kinds of statements.
#[derive(Debug, Clone)]
pub enum StmtKind {
    /// `import a.b [as c]`.
    Import(String, Option<String>),
    /// `t1 = t2 = value` with an optional type.
    Assign(Vec<Target>, Option<Type>, Expr),
    /// `t op= value`.
    AugAssign(Target, &'static str, Expr),
    /// `name: T = default` inside a schema (optional when `?`), or `name: T {config}` at top level.
    Attr {
        /// The attribute.
        name: String,
        /// `?`.
        optional: bool,
        /// Its type.
        ty: Type,
        /// Its default (or unified value), with the operator.
        value: Option<(EntryOp, Expr)>,
    },
    /// `if/elif/else`.
    If(Vec<(Option<Expr>, Vec<Stmt>)>),
    /// `assert cond [if guard][, msg]`.
    Assert(Expr, Option<Expr>, Option<Expr>),
    /// A schema definition.
    Schema(Rc<SchemaDef>),
    /// `@deprecated` on the schema attribute before it: its name and
    /// whether setting it is an error.
    Deprecated(String, bool),
    /// `type Name = T`.
    TypeAlias(String, Type),
    /// An expression.
    Expr(Expr),
}

/// An assignment target.
#[derive(Debug, Clone)]
pub enum Target {
    /// A name.
    Name(String),
    /// `a.b.c` or `a["b"]`: a name and a path under it.
    Path(String, Vec<Expr>),
}
