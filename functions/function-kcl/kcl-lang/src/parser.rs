//! The parser: tokens to a syntax tree, by recursive descent.

use std::rc::Rc;

use crate::ast::*;
use crate::error::{Error, unsupported};
use crate::lexer::{StrPart, Tok, Token, lex};

/// How deeply expressions and blocks may nest.
pub const MAX_NESTING: u32 = 200;

/// Parses a whole program.
pub fn parse_program(src: &str, stack_budget: usize) -> Result<Vec<Stmt>, Error> {
    parse_program_at(src, stack_budget, 1)
}

/// Parses a whole program whose first line is numbered `first_line` (a
/// file of a package, in the run's numbering of lines: see
/// [`crate::sources`]).
pub fn parse_program_at(
    src: &str,
    stack_budget: usize,
    first_line: u32,
) -> Result<Vec<Stmt>, Error> {
    let toks = lex(src, first_line)?;
    let mut p = Parser {
        toks,
        pos: 0,
        nl_ends: true,
        nest: 0,
        stack_base: crate::stack::here(),
        stack_budget,
        deprecated: None,
        memo: Default::default(),
    };
    let mut out = Vec::new();
    while !p.at_eof() {
        if !p.peek().first {
            return p.syntax("expected a new line");
        }
        if p.peek().col != 0 {
            return p.syntax("unexpected indent");
        }
        p.stmt(&mut out, false)?;
    }
    Ok(out)
}

struct Parser {
    toks: Vec<Token>,
    pos: usize,
    /// Whether a token that begins a line ends the expression being read
    /// (statements, config and list entries), rather than continuing it
    /// (inside parentheses, arguments and subscripts).
    nl_ends: bool,
    nest: u32,
    stack_base: usize,
    stack_budget: usize,
    /// `@deprecated` read for the next schema or attribute.
    deprecated: Option<bool>,
    /// Literals already parsed: start position to result and end position.
    memo: std::collections::HashMap<usize, (Result<Expr, Error>, usize)>,
}

/// Positional and keyword arguments of a call.
type CallArgs = (Vec<Expr>, Vec<(String, Expr)>);

const COMPARE_OPS: &[&str] = &["==", "!=", "<", ">", "<=", ">="];

impl Parser {
    fn peek(&self) -> &Token {
        &self.toks[self.pos.min(self.toks.len() - 1)]
    }

    fn peek_at(&self, n: usize) -> &Token {
        &self.toks[(self.pos + n).min(self.toks.len() - 1)]
    }

    fn line(&self) -> u32 {
        self.peek().line
    }

    fn at_eof(&self) -> bool {
        self.peek().tok == Tok::Eof
    }

    fn next(&mut self) -> Token {
        let t = self.peek().clone();
        if self.pos < self.toks.len() {
            self.pos += 1;
        }
        t
    }

    fn at_op(&self, op: &str) -> bool {
        matches!(&self.peek().tok, Tok::Op(o) if *o == op)
    }

    fn at_name(&self, kw: &str) -> bool {
        matches!(&self.peek().tok, Tok::Name(n) if n == kw)
    }

    fn eat_op(&mut self, op: &str) -> bool {
        if self.at_op(op) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn eat_name(&mut self, kw: &str) -> bool {
        if self.at_name(kw) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn syntax<T>(&self, msg: impl Into<String>) -> Result<T, Error> {
        Err(Error::Syntax {
            line: self.line(),
            msg: msg.into(),
        })
    }

    fn expect_op(&mut self, op: &str) -> Result<(), Error> {
        if self.eat_op(op) {
            Ok(())
        } else {
            self.syntax(format!(
                "expected {op:?}, found {}",
                describe(&self.peek().tok)
            ))
        }
    }

    fn ident(&mut self) -> Result<String, Error> {
        match &self.peek().tok {
            Tok::Name(n) => {
                let n = plain(n);
                self.pos += 1;
                Ok(n)
            }
            other => self.syntax(format!("expected a name, found {}", describe(other))),
        }
    }

    /// Whether the next token may continue the current expression.
    fn can_continue(&self) -> bool {
        !(self.at_eof() || (self.nl_ends && self.peek().first))
    }

    fn enter(&mut self) -> Result<(), Error> {
        self.nest += 1;
        if self.nest > MAX_NESTING || crate::stack::used_since(self.stack_base) > self.stack_budget
        {
            return Err(Error::Limit {
                line: self.line(),
                msg: format!("expressions nest deeper than {MAX_NESTING} levels"),
            });
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.nest -= 1;
    }

    fn with_nl<T>(
        &mut self,
        nl_ends: bool,
        f: impl FnOnce(&mut Self) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let saved = self.nl_ends;
        self.nl_ends = nl_ends;
        let r = f(self);
        self.nl_ends = saved;
        r
    }

    // ---------------------------------------------------------------- statements

    /// Whether the current statement has ended (a new line, `;`, a closing
    /// bracket or the end).
    fn at_stmt_end(&self) -> bool {
        let t = self.peek();
        t.first
            || matches!(
                t.tok,
                Tok::Eof | Tok::Op(";") | Tok::Op("}") | Tok::Op(")") | Tok::Op("]")
            )
    }

    fn end_simple(&mut self) -> Result<(), Error> {
        if self.eat_op(";") {
            return Ok(());
        }
        if self.at_stmt_end() {
            Ok(())
        } else {
            self.syntax(format!(
                "expected the end of the statement, found {}",
                describe(&self.peek().tok)
            ))
        }
    }

    /// Reads the block after a header's `:`, whose header began at `col`.
    fn block(&mut self, col: u32, in_schema: bool) -> Result<Vec<Stmt>, Error> {
        self.enter()?;
        let mut out = Vec::new();
        if !self.peek().first {
            // Statements on the header's line.
            while !self.at_stmt_end() || self.at_op(";") {
                if self.eat_op(";") {
                    continue;
                }
                self.stmt(&mut out, in_schema)?;
            }
        } else {
            let bcol = self.peek().col;
            if bcol <= col {
                return self.syntax("expected an indented block");
            }
            while !self.at_eof() && self.peek().first && self.peek().col >= bcol {
                if self.peek().col > bcol {
                    return self.syntax("unexpected indent");
                }
                self.stmt(&mut out, in_schema)?;
            }
        }
        self.leave();
        Ok(out)
    }

    fn stmt(&mut self, out: &mut Vec<Stmt>, in_schema: bool) -> Result<(), Error> {
        let t = self.peek().clone();
        let line = t.line;
        let col = t.col;
        let kw = match &t.tok {
            Tok::Name(n) => n.as_str(),
            Tok::Op("@") => {
                // `@info(...)` and `@deprecated(...)` before a schema or an attribute.
                self.pos += 1;
                let name = self.ident()?;
                let mut strict = true;
                if self.eat_op("(") {
                    let (_, kwargs) = self.args()?;
                    strict = !kwargs
                        .iter()
                        .any(|(k, v)| k == "strict" && matches!(v.kind, ExprKind::Bool(false)));
                }
                match name.as_str() {
                    "info" => {}
                    "deprecated" => self.deprecated = Some(strict),
                    other => return unsupported(format!("decorator @{other}"), line),
                }
                if !self.peek().first {
                    return self.syntax("a decorator stands on its own line");
                }
                return Ok(());
            }
            _ => "",
        };
        match kw {
            "import" => {
                self.pos += 1;
                // Relative imports (`.pkg`, `..pkg`) keep their dots.
                let mut dots = String::new();
                while self.at_op(".") || self.at_op("...") {
                    dots.push_str(if self.at_op(".") { "." } else { "..." });
                    self.pos += 1;
                }
                let mut path = dots + &self.ident()?;
                while self.eat_op(".") {
                    path.push('.');
                    path.push_str(&self.ident()?);
                }
                let alias = if self.eat_name("as") {
                    Some(self.ident()?)
                } else {
                    None
                };
                self.end_simple()?;
                out.push(Stmt {
                    kind: StmtKind::Import(path, alias),
                    line,
                });
                return Ok(());
            }
            "schema" | "mixin" if matches!(self.peek_at(1).tok, Tok::Name(_)) => {
                self.pos += 1;
                let def = self.schema_def(col, line, kw == "mixin")?;
                out.push(Stmt {
                    kind: StmtKind::Schema(Rc::new(def)),
                    line,
                });
                return Ok(());
            }
            "protocol" if matches!(self.peek_at(1).tok, Tok::Name(_)) => {
                // A protocol only types what a mixin may use: it is kept
                // as a schema that cannot be instantiated (like a mixin).
                self.pos += 1;
                let def = self.schema_def(col, line, true)?;
                out.push(Stmt {
                    kind: StmtKind::Schema(Rc::new(def)),
                    line,
                });
                return Ok(());
            }
            "rule" if matches!(self.peek_at(1).tok, Tok::Name(_)) => {
                // A rule: a schema whose body is only check conditions.
                self.pos += 1;
                let name = self.ident()?;
                let params = if self.eat_op("[") {
                    self.params("]")?
                } else {
                    vec![]
                };
                if self.at_op("(") {
                    return unsupported("rule inheritance", line);
                }
                if self.at_name("for") {
                    return unsupported("protocol (rule ... for ...)", line);
                }
                self.expect_op(":")?;
                let mut def = SchemaDef {
                    name,
                    parent: None,
                    mixins: vec![],
                    params,
                    body: vec![],
                    index: None,
                    checks: vec![],
                    line,
                    is_mixin: false,
                    deprecated: self.deprecated.take(),
                };
                self.checks(col, &mut def.checks)?;
                out.push(Stmt {
                    kind: StmtKind::Schema(Rc::new(def)),
                    line,
                });
                return Ok(());
            }
            "type"
                if matches!(self.peek_at(1).tok, Tok::Name(_))
                    && matches!(self.peek_at(2).tok, Tok::Op("=")) =>
            {
                self.pos += 1;
                let name = self.ident()?;
                if matches!(
                    name.as_str(),
                    "any" | "int" | "str" | "float" | "bool" | "list" | "dict"
                ) {
                    return self
                        .syntax(format!("`{name}` is a builtin type and cannot be an alias"));
                }
                self.expect_op("=")?;
                let ty = self.ty()?;
                self.end_simple()?;
                out.push(Stmt {
                    kind: StmtKind::TypeAlias(name, ty),
                    line,
                });
                return Ok(());
            }
            "if" => {
                self.pos += 1;
                let mut arms = Vec::new();
                let cond = self.expr()?;
                self.expect_op(":")?;
                arms.push((Some(cond), self.block(col, in_schema)?));
                loop {
                    if self.peek().first && self.peek().col == col && self.at_name("elif") {
                        self.pos += 1;
                        let cond = self.expr()?;
                        self.expect_op(":")?;
                        arms.push((Some(cond), self.block(col, in_schema)?));
                    } else if self.peek().first && self.peek().col == col && self.at_name("else") {
                        self.pos += 1;
                        self.expect_op(":")?;
                        arms.push((None, self.block(col, in_schema)?));
                        break;
                    } else {
                        break;
                    }
                }
                out.push(Stmt {
                    kind: StmtKind::If(arms),
                    line,
                });
                return Ok(());
            }
            "assert" => {
                self.pos += 1;
                let cond = self.or_expr()?;
                let guard = if self.can_continue() && self.eat_name("if") {
                    Some(self.or_expr()?)
                } else {
                    None
                };
                let msg = if self.eat_op(",") {
                    Some(self.expr()?)
                } else {
                    None
                };
                self.end_simple()?;
                out.push(Stmt {
                    kind: StmtKind::Assert(cond, guard, msg),
                    line,
                });
                return Ok(());
            }
            "for" | "while" | "def" | "return" | "break" | "continue" | "class" | "pass" => {
                return self.syntax(format!("{kw:?} is not KCL"));
            }
            _ => {}
        }
        // `name: T [= value]`, `name?: T`, `name: T {config}`.
        if let Tok::Name(name) = &t.tok {
            let next = &self.peek_at(1).tok;
            if matches!(next, Tok::Op(":"))
                || (matches!(next, Tok::Op("?")) && matches!(self.peek_at(2).tok, Tok::Op(":")))
            {
                let name = plain(name);
                self.pos += 1;
                let optional = self.eat_op("?");
                self.expect_op(":")?;
                let ty = self.ty()?;
                let value = if self.at_op("{") && !self.peek().first {
                    // `a: A {...}`: unify with an instance of the type.
                    let cfg = self.config_literal()?;
                    let callee = type_as_expr(&ty, line)?;
                    Some((
                        EntryOp::Union,
                        Expr {
                            kind: ExprKind::SchemaInst(
                                Box::new(callee),
                                vec![],
                                vec![],
                                Box::new(cfg),
                            ),
                            line,
                        },
                    ))
                } else if self.eat_op("=") {
                    Some((EntryOp::Override, self.expr()?))
                } else {
                    None
                };
                self.end_simple()?;
                let deprecated = self.deprecated.take().map(|strict| Stmt {
                    kind: StmtKind::Deprecated(name.clone(), strict),
                    line,
                });
                out.push(Stmt {
                    kind: StmtKind::Attr {
                        name,
                        optional,
                        ty,
                        value,
                    },
                    line,
                });
                out.extend(deprecated);
                return Ok(());
            }
        }
        if self.deprecated.is_some() {
            return self.syntax("a decorator must come before a schema or a schema attribute");
        }
        let e = self.expr()?;
        if self.at_op("=") {
            let mut targets = vec![to_target(e)?];
            let mut value;
            loop {
                self.expect_op("=")?;
                value = self.expr()?;
                if self.at_op("=") {
                    targets.push(to_target(value)?);
                } else {
                    break;
                }
            }
            self.end_simple()?;
            out.push(Stmt {
                kind: StmtKind::Assign(targets, None, value),
                line,
            });
            return Ok(());
        }
        for op in [
            "+=", "-=", "*=", "/=", "//=", "%=", "**=", "<<=", ">>=", "&=", "|=", "^=",
        ] {
            if self.eat_op(op) {
                let target = to_target(e)?;
                let value = self.expr()?;
                self.end_simple()?;
                let bin = &op[..op.len() - 1];
                let bin: &'static str = [
                    "+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^",
                ]
                .into_iter()
                .find(|b| *b == bin)
                .unwrap_or("+");
                out.push(Stmt {
                    kind: StmtKind::AugAssign(target, bin, value),
                    line,
                });
                return Ok(());
            }
        }
        self.end_simple()?;
        out.push(Stmt {
            kind: StmtKind::Expr(e),
            line,
        });
        Ok(())
    }

    fn schema_def(&mut self, col: u32, line: u32, is_mixin: bool) -> Result<SchemaDef, Error> {
        let deprecated = self.deprecated.take();
        let name = self.ident()?;
        let mut params = Vec::new();
        if self.eat_op("[") {
            params = self.params("]")?;
        }
        let mut parent = None;
        if self.eat_op("(") {
            let p = self.with_nl(false, |p| p.primary_no_brace())?;
            self.expect_op(")")?;
            parent = Some(p);
        }
        // `mixin M for P`: the protocol types the mixin's host attributes;
        // its checks are static, which xfn-kcl does not make.
        if self.at_name("for") && !is_mixin {
            return self.syntax("only a mixin can be `for` a protocol");
        }
        if self.eat_name("for") {
            self.with_nl(false, |p| p.primary_no_brace())?;
        }
        self.expect_op(":")?;
        // The body, read statement by statement for checks, mixins and the index signature.
        let mut def = SchemaDef {
            name,
            parent,
            mixins: vec![],
            params,
            body: vec![],
            index: None,
            checks: vec![],
            line,
            is_mixin,
            deprecated,
        };
        if !self.peek().first {
            return self.syntax("a schema body must be an indented block");
        }
        let bcol = self.peek().col;
        if bcol <= col {
            return self.syntax("expected an indented block");
        }
        while !self.at_eof() && self.peek().first && self.peek().col >= bcol {
            if self.peek().col > bcol {
                return self.syntax("unexpected indent");
            }
            let l = self.line();
            if self.at_name("check") && matches!(self.peek_at(1).tok, Tok::Op(":")) {
                self.pos += 2;
                self.checks(bcol, &mut def.checks)?;
            } else if self.at_name("mixin") && matches!(self.peek_at(1).tok, Tok::Op("[")) {
                self.pos += 2;
                self.with_nl(false, |p| {
                    while !p.eat_op("]") {
                        def.mixins.push(p.primary_no_brace()?);
                        p.eat_op(",");
                    }
                    Ok(())
                })?;
            } else if self.at_op("[") {
                self.pos += 1;
                let _any = self.eat_op("...");
                let key_name = if matches!(self.peek().tok, Tok::Name(_))
                    && matches!(self.peek_at(1).tok, Tok::Op(":"))
                {
                    let n = self.ident()?;
                    self.pos += 1;
                    Some(n)
                } else {
                    None
                };
                let kt = self.ty()?;
                self.expect_op("]")?;
                self.expect_op(":")?;
                let vt = self.ty()?;
                if self.eat_op("=") {
                    return unsupported("a default value of a schema index signature", l);
                }
                self.end_simple()?;
                def.index = Some((key_name, kt, vt));
            } else {
                self.stmt(&mut def.body, true)?;
            }
        }
        Ok(def)
    }

    fn checks(&mut self, col: u32, out: &mut Vec<Check>) -> Result<(), Error> {
        if !self.peek().first {
            return self.syntax("a check block must be an indented block");
        }
        let bcol = self.peek().col;
        if bcol <= col {
            return self.syntax("expected an indented block");
        }
        while !self.at_eof() && self.peek().first && self.peek().col >= bcol {
            let line = self.line();
            let cond = self.or_expr()?;
            let guard = if self.can_continue() && self.eat_name("if") {
                Some(self.or_expr()?)
            } else {
                None
            };
            let msg = if self.eat_op(",") {
                Some(self.expr()?)
            } else {
                None
            };
            self.end_simple()?;
            out.push(Check {
                cond,
                guard,
                msg,
                line,
            });
        }
        Ok(())
    }

    fn params(&mut self, close: &str) -> Result<Vec<Param>, Error> {
        self.with_nl(false, |p| {
            let mut params = Vec::new();
            while !p.eat_op(close) {
                let name = p.ident()?;
                let ty = if p.eat_op(":") { Some(p.ty()?) } else { None };
                let def = if p.eat_op("=") { Some(p.expr()?) } else { None };
                params.push((name, ty, def));
                if !p.eat_op(",") {
                    p.expect_op(close)?;
                    break;
                }
            }
            Ok(params)
        })
    }

    // ---------------------------------------------------------------- types

    fn ty(&mut self) -> Result<Type, Error> {
        let mut alts = vec![self.ty_single()?];
        while self.at_op("|") && !self.peek().first {
            self.pos += 1;
            alts.push(self.ty_single()?);
        }
        Ok(if alts.len() == 1 {
            alts.remove(0)
        } else {
            Type::Union(alts)
        })
    }

    fn ty_single(&mut self) -> Result<Type, Error> {
        let t = self.next();
        Ok(match t.tok {
            Tok::Name(n) => match n.as_str() {
                "any" => Type::Any,
                "True" => Type::Lit(LitType::Bool(true)),
                "False" => Type::Lit(LitType::Bool(false)),
                "None" => Type::Lit(LitType::None),
                _ => {
                    let mut n = n;
                    while self.at_op(".") {
                        self.pos += 1;
                        n.push('.');
                        n.push_str(&self.ident()?);
                    }
                    Type::Named(n)
                }
            },
            Tok::Op("[") => {
                let inner = if self.at_op("]") {
                    Type::Any
                } else {
                    self.with_nl(false, |p| p.ty())?
                };
                self.expect_op("]")?;
                Type::List(Box::new(inner))
            }
            Tok::Op("{") => {
                let (k, v) = self.with_nl(false, |p| {
                    if p.at_op("}") {
                        return Ok((Type::Any, Type::Any));
                    }
                    let k = if p.at_op(":") { Type::Any } else { p.ty()? };
                    p.expect_op(":")?;
                    let v = if p.at_op("}") { Type::Any } else { p.ty()? };
                    Ok((k, v))
                })?;
                self.expect_op("}")?;
                Type::Dict(Box::new(k), Box::new(v))
            }
            Tok::Op("(") => {
                self.with_nl(false, |p| {
                    while !p.eat_op(")") {
                        p.ty()?;
                        p.eat_op(",");
                    }
                    Ok(())
                })?;
                if self.eat_op("->") {
                    self.ty()?;
                }
                Type::Func
            }
            Tok::Str(parts) => match parts.as_slice() {
                [StrPart::Lit(s)] => Type::Lit(LitType::Str(s.clone())),
                _ => return self.syntax("a literal type cannot interpolate"),
            },
            Tok::Int(i) => Type::Lit(LitType::Int(i)),
            Tok::Float(f) => Type::Lit(LitType::Float(f)),
            Tok::Unit(n, suffix) => {
                let factor = crate::lexer::MULTIPLIERS
                    .iter()
                    .find(|(s, _)| *s == suffix)
                    .map(|(_, f)| *f)
                    .unwrap_or(1.0);
                Type::Lit(LitType::Unit(n as f64 * factor))
            }
            Tok::Op("-") => match self.next().tok {
                Tok::Int(i) => Type::Lit(LitType::Int(-i)),
                Tok::Float(f) => Type::Lit(LitType::Float(-f)),
                other => {
                    return self.syntax(format!("expected a type, found {}", describe(&other)));
                }
            },
            other => return self.syntax(format!("expected a type, found {}", describe(&other))),
        })
    }

    // ---------------------------------------------------------------- expressions

    fn expr(&mut self) -> Result<Expr, Error> {
        self.enter()?;
        let r = self.ternary();
        self.leave();
        r
    }

    fn ternary(&mut self) -> Result<Expr, Error> {
        let e = self.or_expr()?;
        if self.can_continue() && self.at_name("if") {
            let line = self.line();
            self.pos += 1;
            let cond = self.or_expr()?;
            if !self.eat_name("else") {
                return self.syntax("expected `else` in a conditional expression");
            }
            let other = self.expr()?;
            return Ok(Expr {
                kind: ExprKind::IfElse(Box::new(cond), Box::new(e), Box::new(other)),
                line,
            });
        }
        Ok(e)
    }

    fn lambda(&mut self) -> Result<Expr, Error> {
        let line = self.line();
        self.pos += 1;
        let mut params = Vec::new();
        self.with_nl(false, |p| {
            while !p.at_op("{") && !p.at_op("->") {
                let name = p.ident()?;
                let ty = if p.eat_op(":") { Some(p.ty()?) } else { None };
                let def = if p.eat_op("=") {
                    Some(p.or_expr()?)
                } else {
                    None
                };
                params.push((name, ty, def));
                // KCL reads a parameter after another without a comma too.
                if !p.eat_op(",") && !matches!(p.peek().tok, Tok::Name(_)) {
                    break;
                }
            }
            Ok(())
        })?;
        let ret = if self.eat_op("->") {
            Some(self.ty()?)
        } else {
            None
        };
        self.expect_op("{")?;
        let body = self.with_nl(true, |p| {
            let mut body = Vec::new();
            while !p.at_op("}") {
                if p.at_eof() {
                    return p.syntax("unterminated lambda body");
                }
                if p.eat_op(";") {
                    continue;
                }
                let col = if p.peek().first { p.peek().col } else { 0 };
                let _ = col;
                p.stmt(&mut body, false)?;
            }
            Ok(body)
        })?;
        self.expect_op("}")?;
        Ok(Expr {
            kind: ExprKind::Lambda(Rc::new(Lambda {
                params,
                ret,
                body,
                line,
            })),
            line,
        })
    }

    fn or_expr(&mut self) -> Result<Expr, Error> {
        let mut e = self.and_expr()?;
        while self.can_continue() && self.at_name("or") {
            let line = self.line();
            self.pos += 1;
            let r = self.and_expr()?;
            e = bin("or", e, r, line);
        }
        Ok(e)
    }

    fn and_expr(&mut self) -> Result<Expr, Error> {
        let mut e = self.not_expr()?;
        while self.can_continue() && self.at_name("and") {
            let line = self.line();
            self.pos += 1;
            let r = self.not_expr()?;
            e = bin("and", e, r, line);
        }
        Ok(e)
    }

    fn not_expr(&mut self) -> Result<Expr, Error> {
        if self.at_name("not") {
            let line = self.line();
            self.pos += 1;
            // KCL's parser takes no sign right after `not`.
            if self.at_op("-") || self.at_op("+") || self.at_op("~") {
                return self.syntax("a sign cannot follow `not`: write `not (-x)`");
            }
            self.enter()?;
            let e = self.not_expr();
            self.leave();
            return Ok(Expr {
                kind: ExprKind::Unary("not", Box::new(e?)),
                line,
            });
        }
        self.comparison()
    }

    fn comparison(&mut self) -> Result<Expr, Error> {
        let line = self.line();
        let first = self.binop(0)?;
        let mut rest = Vec::new();
        loop {
            if !self.can_continue() {
                break;
            }
            if self.at_name("as") {
                let line = self.line();
                self.pos += 1;
                let ty = self.ty()?;
                let base = if rest.is_empty() {
                    first
                } else {
                    return self.syntax("`as` after a comparison needs parentheses");
                };
                return Ok(Expr {
                    kind: ExprKind::As(Box::new(base), ty),
                    line,
                });
            }
            let op: &'static str = match &self.peek().tok {
                Tok::Op(o) if COMPARE_OPS.contains(o) => o,
                Tok::Name(n) if n == "in" => "in",
                Tok::Name(n)
                    if n == "not" && matches!(&self.peek_at(1).tok, Tok::Name(m) if m == "in") =>
                {
                    self.pos += 1;
                    "not in"
                }
                Tok::Name(n) if n == "is" => {
                    if matches!(&self.peek_at(1).tok, Tok::Name(m) if m == "not") {
                        self.pos += 1;
                        "is not"
                    } else {
                        "is"
                    }
                }
                _ => break,
            };
            self.pos += 1;
            rest.push((op, self.binop(0)?));
        }
        if rest.is_empty() {
            return Ok(first);
        }
        if rest.len() == 1 {
            let (op, r) = rest.remove(0);
            return Ok(bin(op, first, r, line));
        }
        Ok(Expr {
            kind: ExprKind::Compare(Box::new(first), rest),
            line,
        })
    }

    /// Binary operators by precedence level: `|`, `^`, `&`, shifts, `+ -`, `* / // %`.
    fn binop(&mut self, level: usize) -> Result<Expr, Error> {
        const LEVELS: &[&[&str]] = &[
            &["|"],
            &["^"],
            &["&"],
            &["<<", ">>"],
            &["+", "-"],
            &["*", "/", "//", "%"],
        ];
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut e = self.binop(level + 1)?;
        loop {
            if !self.can_continue() {
                break;
            }
            let op = match &self.peek().tok {
                Tok::Op(o) if LEVELS[level].contains(o) => *o,
                _ => break,
            };
            let line = self.line();
            self.pos += 1;
            let r = self.binop(level + 1)?;
            e = bin(op, e, r, line);
        }
        Ok(e)
    }

    fn unary(&mut self) -> Result<Expr, Error> {
        let line = self.line();
        for op in ["-", "+", "~"] {
            if self.at_op(op) {
                self.pos += 1;
                self.enter()?;
                let e = self.unary();
                self.leave();
                return Ok(Expr {
                    kind: ExprKind::Unary(op, Box::new(e?)),
                    line,
                });
            }
        }
        let base = self.primary(false)?;
        if self.can_continue() && self.at_op("**") {
            self.pos += 1;
            self.enter()?;
            let exp = self.unary();
            self.leave();
            return Ok(bin("**", base, exp?, line));
        }
        Ok(base)
    }

    fn primary_no_brace(&mut self) -> Result<Expr, Error> {
        self.primary(true)
    }

    fn primary(&mut self, no_brace: bool) -> Result<Expr, Error> {
        let mut e = self.atom()?;
        loop {
            if self.at_eof() {
                break;
            }
            let first = self.peek().first;
            if first && self.nl_ends {
                break;
            }
            let line = self.line();
            match &self.peek().tok {
                Tok::Op(".") | Tok::Op("?.") => {
                    let safe = self.at_op("?.");
                    self.pos += 1;
                    let name = self.ident()?;
                    e = Expr {
                        kind: ExprKind::Attr(Box::new(e), name, safe),
                        line,
                    };
                }
                Tok::Op("[") | Tok::Op("?[") if !first => {
                    let safe = self.at_op("?[");
                    self.pos += 1;
                    e = self.with_nl(false, |p| p.subscript(e, safe, line))?;
                }
                Tok::Op("(") if !first => {
                    self.pos += 1;
                    let (args, kwargs) = self.args()?;
                    e = Expr {
                        kind: ExprKind::Call(Box::new(e), args, kwargs),
                        line,
                    };
                }
                Tok::Op("{") if !first && !no_brace && is_schema_callee(&e) => {
                    let cfg = self.config_literal()?;
                    e = match e.kind {
                        ExprKind::Call(callee, args, kwargs) => Expr {
                            kind: ExprKind::SchemaInst(callee, args, kwargs, Box::new(cfg)),
                            line,
                        },
                        other => Expr {
                            kind: ExprKind::SchemaInst(
                                Box::new(Expr {
                                    kind: other,
                                    line: e.line,
                                }),
                                vec![],
                                vec![],
                                Box::new(cfg),
                            ),
                            line,
                        },
                    };
                }
                _ => break,
            }
        }
        Ok(e)
    }

    fn subscript(&mut self, base: Expr, safe: bool, line: u32) -> Result<Expr, Error> {
        let mut parts: [Option<Box<Expr>>; 3] = [None, None, None];
        let mut idx = 0;
        let mut is_slice = false;
        loop {
            if self.eat_op("]") {
                break;
            }
            if self.eat_op(":") {
                is_slice = true;
                idx += 1;
                if idx > 2 {
                    return self.syntax("too many `:` in a slice");
                }
                continue;
            }
            parts[idx] = Some(Box::new(self.expr()?));
        }
        if is_slice {
            Ok(Expr {
                kind: ExprKind::Slice(Box::new(base), parts, safe),
                line,
            })
        } else {
            let Some(i) = parts[0].take() else {
                return self.syntax("empty subscript");
            };
            Ok(Expr {
                kind: ExprKind::Index(Box::new(base), i, safe),
                line,
            })
        }
    }

    fn args(&mut self) -> Result<CallArgs, Error> {
        self.with_nl(false, |p| {
            let mut args = Vec::new();
            let mut kwargs = Vec::new();
            while !p.eat_op(")") {
                if p.at_op("*") || p.at_op("**") {
                    return unsupported("*args/**kwargs in a call", p.line());
                }
                if let (Tok::Name(n), Tok::Op("=")) = (&p.peek().tok, &p.peek_at(1).tok) {
                    let n = n.clone();
                    p.pos += 2;
                    kwargs.push((n, p.expr()?));
                } else {
                    args.push(p.expr()?);
                }
                // KCL reads an argument after another without a comma too.
                if !p.eat_op(",") && p.at_op(")") {
                    p.pos += 1;
                    break;
                }
            }
            Ok((args, kwargs))
        })
    }

    fn atom(&mut self) -> Result<Expr, Error> {
        let t = self.next();
        let line = t.line;
        let kind = match t.tok {
            Tok::Int(i) => ExprKind::Int(i),
            Tok::Float(f) => ExprKind::Float(f),
            Tok::Unit(n, suffix) => ExprKind::Unit(n, suffix),
            Tok::Str(parts) => ExprKind::Str(self.str_segments(parts)?),
            Tok::Name(n) => match n.as_str() {
                "None" => ExprKind::None,
                "Undefined" => ExprKind::Undefined,
                "True" => ExprKind::Bool(true),
                "False" => ExprKind::Bool(false),
                "all" | "any" | "map" | "filter" if self.is_quantifier() => {
                    let op: &'static str = match n.as_str() {
                        "all" => "all",
                        "any" => "any",
                        "map" => "map",
                        _ => "filter",
                    };
                    return self.quantifier(op, line);
                }
                // Quantifier keywords are reserved: `all(...)` is not a call.
                "all" | "any" | "map" | "filter" => {
                    return Err(Error::Syntax {
                        line,
                        msg: format!(
                            "`{n}` is a quantifier (`{n} x in items {{ ... }}`), not a name"
                        ),
                    });
                }
                "lambda" => {
                    self.pos -= 1;
                    return self.lambda();
                }
                _ => ExprKind::Name(plain(&n)),
            },
            Tok::Op("(") => {
                let e = self.with_nl(false, |p| p.expr())?;
                self.expect_op(")")?;
                return Ok(e);
            }
            Tok::Op("[") => return self.list_literal(line),
            Tok::Op("{") => {
                self.pos -= 1;
                return self.config_literal();
            }
            other => {
                return Err(Error::Syntax {
                    line,
                    msg: format!("unexpected {}", describe(&other)),
                });
            }
        };
        Ok(Expr { kind, line })
    }

    fn str_segments(&mut self, parts: Vec<StrPart>) -> Result<Vec<StrSeg>, Error> {
        let mut out = Vec::new();
        for p in parts {
            match p {
                StrPart::Lit(s) => out.push(StrSeg::Lit(s)),
                StrPart::Expr(src, line, spec) => {
                    let toks = lex(&src, line)?;
                    let mut sub = Parser {
                        toks,
                        pos: 0,
                        nl_ends: false,
                        nest: self.nest,
                        stack_base: self.stack_base,
                        stack_budget: self.stack_budget,
                        deprecated: None,
                        memo: Default::default(),
                    };
                    let e = sub.expr()?;
                    if !sub.at_eof() {
                        return Err(Error::Syntax {
                            line,
                            msg: "invalid string interpolation".into(),
                        });
                    }
                    out.push(StrSeg::Expr(e, spec));
                }
            }
        }
        Ok(out)
    }

    fn is_quantifier(&self) -> bool {
        // `all x in`, `all x, y in`
        match (&self.peek().tok, &self.peek_at(1).tok) {
            (Tok::Name(_), Tok::Name(n)) if n == "in" => true,
            (Tok::Name(_), Tok::Op(",")) => {
                matches!((&self.peek_at(2).tok, &self.peek_at(3).tok), (Tok::Name(_), Tok::Name(n)) if n == "in")
            }
            _ => false,
        }
    }

    fn quantifier(&mut self, op: &'static str, line: u32) -> Result<Expr, Error> {
        let mut vars = vec![self.ident()?];
        if self.eat_op(",") {
            vars.push(self.ident()?);
        }
        if !self.eat_name("in") {
            return self.syntax("expected `in`");
        }
        // KCL's quantifier target: a string, a dotted name, or a list or
        // config literal (no calls or subscripts).
        let iter = match self.peek().tok.clone() {
            Tok::Str(_) | Tok::Op("[") | Tok::Op("{") => self.with_nl(false, |p| p.atom())?,
            Tok::Name(_) => {
                let line = self.line();
                let mut e = Expr {
                    kind: ExprKind::Name(self.ident()?),
                    line,
                };
                while self.eat_op(".") {
                    e = Expr {
                        kind: ExprKind::Attr(Box::new(e), self.ident()?, false),
                        line,
                    };
                }
                e
            }
            other => {
                return self.syntax(format!(
                    "expected a name, a list or a config after `in`, found {}",
                    describe(&other)
                ));
            }
        };
        self.expect_op("{")?;
        // `{ body }`, `{ body if guard }`, or a conditional expression.
        let (body, guard) = self.with_nl(false, |p| {
            if p.at_name("lambda") {
                return Ok((p.expr()?, None));
            }
            let body = p.or_expr()?;
            if !p.eat_name("if") {
                return Ok((body, None));
            }
            let line = p.line();
            let guard = p.or_expr()?;
            if p.eat_name("else") {
                let other = p.expr()?;
                return Ok((
                    Expr {
                        kind: ExprKind::IfElse(Box::new(guard), Box::new(body), Box::new(other)),
                        line,
                    },
                    None,
                ));
            }
            Ok((body, Some(Box::new(guard))))
        })?;
        self.expect_op("}")?;
        Ok(Expr {
            kind: ExprKind::Quant(op, vars, Box::new(iter), Box::new(body), guard),
            line,
        })
    }

    fn comp_fors(&mut self) -> Result<Vec<CompFor>, Error> {
        let mut fors = Vec::new();
        while self.eat_name("for") {
            let mut vars = vec![self.ident()?];
            while self.eat_op(",") {
                vars.push(self.ident()?);
            }
            if vars.len() > 2 {
                return self.syntax("a comprehension binds one or two names");
            }
            if !self.eat_name("in") {
                return self.syntax("expected `in`");
            }
            let iter = self.or_expr()?;
            let mut ifs = Vec::new();
            while self.eat_name("if") {
                ifs.push(self.or_expr()?);
            }
            fors.push(CompFor { vars, iter, ifs });
        }
        Ok(fors)
    }

    /// A list literal after its `[`, parsed once per position: telling a
    /// comprehension from a list reads the first element twice, and
    /// without the memo nested literals would be read exponentially often.
    fn list_literal(&mut self, line: u32) -> Result<Expr, Error> {
        self.memoized(|p| p.list_literal_once(line))
    }

    fn memoized(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<Expr, Error>,
    ) -> Result<Expr, Error> {
        let start = self.pos;
        if let Some((r, end)) = self.memo.get(&start) {
            let r = r.clone();
            self.pos = *end;
            return r;
        }
        let r = f(self);
        self.memo.insert(start, (r.clone(), self.pos));
        r
    }

    fn list_literal_once(&mut self, line: u32) -> Result<Expr, Error> {
        self.enter()?;
        let r = self.with_nl(true, |p| {
            if p.eat_op("]") {
                return Ok(Expr {
                    kind: ExprKind::List(vec![]),
                    line,
                });
            }
            // A comprehension?
            if !p.at_op("*") && !p.at_name("if") {
                let save = p.pos;
                // The first element, to see whether `for` follows it; an
                // element that does not parse alone is no comprehension.
                let Ok(first) = p.with_nl(true, |p| p.expr()) else {
                    p.pos = save;
                    let items = p.list_items(None)?;
                    p.expect_op("]")?;
                    return Ok(Expr {
                        kind: ExprKind::List(items),
                        line,
                    });
                };
                // A comma may end the element before `for`.
                if p.at_op(",") && matches!(&p.peek_at(1).tok, Tok::Name(n) if n == "for") {
                    p.pos += 1;
                }
                if p.at_name("for") {
                    let fors = p.with_nl(false, |p| p.comp_fors())?;
                    p.expect_op("]")?;
                    return Ok(Expr {
                        kind: ExprKind::ListComp(Box::new(first), fors),
                        line,
                    });
                }
                p.pos = save;
            }
            let items = p.list_items(None)?;
            p.expect_op("]")?;
            Ok(Expr {
                kind: ExprKind::List(items),
                line,
            })
        });
        self.leave();
        r
    }

    /// List items up to `]`, or, inside an `if` entry whose keyword is at
    /// column `if_col`, up to the end of its block.
    fn list_items(&mut self, if_col: Option<(u32, bool)>) -> Result<Vec<ListItem>, Error> {
        let mut items = Vec::new();
        loop {
            if self.at_op("]") || self.at_eof() {
                break;
            }
            if let Some((col, same_line)) = if_col {
                let t = self.peek();
                // An `if` with its body on its own line takes one item.
                if same_line && (t.first || !items.is_empty()) {
                    break;
                }
                if !same_line && t.first && t.col <= col {
                    break;
                }
            }
            if self.at_op("*") {
                self.pos += 1;
                items.push(ListItem::Star(self.expr()?));
            } else if self.at_name("if") {
                let col = self.peek().col;
                let mut arms = Vec::new();
                self.pos += 1;
                let cond = self.with_nl(false, |p| p.or_expr())?;
                self.expect_op(":")?;
                let same = !self.peek().first;
                arms.push((Some(cond), self.list_items(Some((col, same)))?));
                loop {
                    if self.peek().col == col && self.at_name("elif") {
                        self.pos += 1;
                        let cond = self.with_nl(false, |p| p.or_expr())?;
                        self.expect_op(":")?;
                        let same = !self.peek().first;
                        arms.push((Some(cond), self.list_items(Some((col, same)))?));
                    } else if self.peek().col == col && self.at_name("else") {
                        self.pos += 1;
                        self.expect_op(":")?;
                        let same = !self.peek().first;
                        arms.push((None, self.list_items(Some((col, same)))?));
                        break;
                    } else {
                        break;
                    }
                }
                items.push(ListItem::If(arms));
            } else {
                items.push(ListItem::Expr(self.expr()?));
            }
            self.eat_op(",");
        }
        Ok(items)
    }

    /// A config literal from its `{`, parsed once per position (see
    /// [`Parser::list_literal`]).
    fn config_literal(&mut self) -> Result<Expr, Error> {
        self.memoized(|p| p.config_literal_once())
    }

    fn config_literal_once(&mut self) -> Result<Expr, Error> {
        let line = self.line();
        self.expect_op("{")?;
        self.enter()?;
        let r = self.with_nl(true, |p| {
            if p.eat_op("}") {
                return Ok(Expr {
                    kind: ExprKind::Config(vec![]),
                    line,
                });
            }
            // A dict comprehension?
            if !p.at_op("**") && !p.at_name("if") {
                let save = p.pos;
                if let Ok(k) = p.with_nl(true, |p| p.or_expr())
                    && (p.eat_op(":") || p.eat_op("="))
                    && let Ok(v) = p.with_nl(true, |p| p.expr())
                    && p.at_name("for")
                {
                    let fors = p.with_nl(false, |p| p.comp_fors())?;
                    p.expect_op("}")?;
                    return Ok(Expr {
                        kind: ExprKind::DictComp(Box::new(k), Box::new(v), fors),
                        line,
                    });
                }
                p.pos = save;
            }
            let entries = p.entries(None)?;
            p.expect_op("}")?;
            Ok(Expr {
                kind: ExprKind::Config(entries),
                line,
            })
        });
        self.leave();
        r
    }

    fn entries(&mut self, if_col: Option<(u32, bool)>) -> Result<Vec<Entry>, Error> {
        let mut out = Vec::new();
        loop {
            if self.at_op("}") || self.at_eof() {
                break;
            }
            if let Some((col, same_line)) = if_col {
                let t = self.peek();
                // An `if` with its body on its own line takes one item.
                if same_line && (t.first || !out.is_empty()) {
                    break;
                }
                if !same_line && t.first && t.col <= col {
                    break;
                }
            }
            let line = self.line();
            if self.eat_op("**") {
                out.push(Entry::Unpack(self.expr()?));
            } else if self.at_name("if")
                && !matches!(self.peek_at(1).tok, Tok::Op(":" | "=" | "+="))
            {
                let col = self.peek().col;
                let mut arms = Vec::new();
                self.pos += 1;
                let cond = self.with_nl(false, |p| p.or_expr())?;
                self.expect_op(":")?;
                let same = !self.peek().first;
                arms.push((Some(cond), self.entries(Some((col, same)))?));
                loop {
                    if self.peek().col == col
                        && self.at_name("elif")
                        && !matches!(self.peek_at(1).tok, Tok::Op(":" | "="))
                    {
                        self.pos += 1;
                        let cond = self.with_nl(false, |p| p.or_expr())?;
                        self.expect_op(":")?;
                        let same = !self.peek().first;
                        arms.push((Some(cond), self.entries(Some((col, same)))?));
                    } else if self.peek().col == col
                        && self.at_name("else")
                        && matches!(self.peek_at(1).tok, Tok::Op(":"))
                    {
                        self.pos += 1;
                        self.expect_op(":")?;
                        let same = !self.peek().first;
                        arms.push((None, self.entries(Some((col, same)))?));
                        break;
                    } else {
                        break;
                    }
                }
                out.push(Entry::If(arms));
            } else {
                let key = self.key()?;
                let op = if self.eat_op(":") {
                    EntryOp::Union
                } else if self.eat_op("=") {
                    EntryOp::Override
                } else if self.eat_op("+=") {
                    EntryOp::Insert
                } else {
                    return self.syntax(format!(
                        "expected `:`, `=` or `+=` after a config key, found {}",
                        describe(&self.peek().tok)
                    ));
                };
                let value = self.expr()?;
                out.push(Entry::Kv(key, op, value, line));
            }
            self.eat_op(",");
        }
        Ok(out)
    }

    fn key(&mut self) -> Result<Key, Error> {
        let t = self.peek().clone();
        match t.tok {
            Tok::Name(n) => {
                self.pos += 1;
                let mut path = vec![plain(&n)];
                while self.at_op(".") {
                    self.pos += 1;
                    path.push(self.ident()?);
                }
                if self.at_op("[") {
                    return unsupported("a config key with a subscript", t.line);
                }
                Ok(Key::Path(path))
            }
            Tok::Str(parts) => {
                self.pos += 1;
                if let [StrPart::Lit(s)] = parts.as_slice() {
                    let s = s.clone();
                    if self.at_op(".") {
                        return unsupported("a dotted config key after a string", t.line);
                    }
                    return Ok(Key::Path(vec![s]));
                }
                let segs = self.str_segments(parts)?;
                Ok(Key::Expr(Expr {
                    kind: ExprKind::Str(segs),
                    line: t.line,
                }))
            }
            Tok::Op("(") => {
                self.pos += 1;
                let e = self.with_nl(false, |p| p.expr())?;
                self.expect_op(")")?;
                Ok(Key::Expr(e))
            }
            Tok::Int(_) | Tok::Float(_) => {
                let e = self.atom()?;
                Ok(Key::Expr(e))
            }
            Tok::Op("[") => unsupported("a list as a config key", t.line),
            other => self.syntax(format!("expected a config key, found {}", describe(&other))),
        }
    }
}

/// A name without the `$` that lets a keyword be a name (`$if`).
fn plain(n: &str) -> String {
    n.strip_prefix('$')
        .filter(|r| !r.is_empty())
        .unwrap_or(n)
        .to_string()
}

fn bin(op: &'static str, l: Expr, r: Expr, line: u32) -> Expr {
    Expr {
        kind: ExprKind::Binary(op, Box::new(l), Box::new(r)),
        line,
    }
}

fn is_schema_callee(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Name(n) => !matches!(n.as_str(), "True" | "False" | "None" | "Undefined"),
        ExprKind::Attr(b, _, false) => is_schema_callee(b),
        ExprKind::Call(c, _, _) => {
            matches!(c.kind, ExprKind::Name(_) | ExprKind::Attr(..)) && is_schema_callee(c)
        }
        _ => false,
    }
}

fn type_as_expr(ty: &Type, line: u32) -> Result<Expr, Error> {
    let Type::Named(n) = ty else {
        return Err(Error::Syntax {
            line,
            msg: "only a schema can be instantiated with `{...}`".into(),
        });
    };
    let mut parts = n.split('.');
    let mut e = Expr {
        kind: ExprKind::Name(parts.next().unwrap_or_default().to_string()),
        line,
    };
    for p in parts {
        e = Expr {
            kind: ExprKind::Attr(Box::new(e), p.to_string(), false),
            line,
        };
    }
    Ok(e)
}

fn to_target(e: Expr) -> Result<Target, Error> {
    let line = e.line;
    match e.kind {
        ExprKind::Name(n) => Ok(Target::Name(n)),
        ExprKind::Attr(..) | ExprKind::Index(..) => {
            let mut path = Vec::new();
            let mut cur = e;
            loop {
                match cur.kind {
                    ExprKind::Attr(b, name, _) => {
                        path.push(Expr {
                            kind: ExprKind::Str(vec![StrSeg::Lit(name)]),
                            line,
                        });
                        cur = *b;
                    }
                    ExprKind::Index(b, i, _) => {
                        path.push(*i);
                        cur = *b;
                    }
                    ExprKind::Name(n) => {
                        path.reverse();
                        return Ok(Target::Path(n, path));
                    }
                    _ => {
                        return Err(Error::Syntax {
                            line,
                            msg: "invalid assignment target".into(),
                        });
                    }
                }
            }
        }
        _ => Err(Error::Syntax {
            line,
            msg: "invalid assignment target".into(),
        }),
    }
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Name(n) => format!("`{n}`"),
        Tok::Int(i) => format!("`{i}`"),
        Tok::Float(f) => format!("`{f}`"),
        Tok::Str(_) => "a string".into(),
        Tok::Unit(n, s) => format!("`{n}{s}`"),
        Tok::Op(o) => format!("`{o}`"),
        Tok::Eof => "the end of the program".into(),
    }
}
