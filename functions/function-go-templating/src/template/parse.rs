//! The parser of Go's `text/template/parse` (Go 1.19): builds the trees of a
//! template text (the main one and every `define`/`block`), checking
//! function names and variables as Go does, with Go's error texts.

use std::collections::HashMap;

use super::lex::{Item, ItemType, lex};
use super::node::{Arg, Command, Control, ControlKind, List, Node, Number, Pipe};

/// The most nodes one template text may parse into (a guard against hostile
/// input; Go has none).
pub const MAX_NODES: usize = 1_000_000;
/// The deepest nesting of controls and parentheses a text may have.
pub const MAX_NESTING: usize = 200;

/// A parse error, already in Go's form (`template: NAME:LINE: ...`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ParseError(pub String);

/// Parses `text` named `name` into `trees` (keyed by template name), as Go's
/// `Template.Parse` does; `has_function` says whether a function name is
/// defined (Go checks names at parse time).
pub fn parse(
    name: &str,
    text: &str,
    left: &str,
    right: &str,
    has_function: &dyn Fn(&str) -> bool,
    trees: &mut HashMap<String, List>,
) -> Result<(), ParseError> {
    let items = lex(text, left, right);
    let mut p = Parser {
        items,
        idx: 0,
        parse_name: name.to_string(),
        vars: vec!["$".to_string()],
        has_function,
        trees,
        action_line: 0,
        range_depth: 0,
        depth: 0,
        nodes: 0,
        furthest: 0,
    };
    p.parse_top(name)
}

/// Go's `IsEmptyTree`: only spaces and comments.
pub fn is_empty_tree(list: &List) -> bool {
    list.iter().all(|n| match n {
        Node::Text(t) => {
            t.trim_matches([' ', '\t', '\n', '\r', '\u{b}', '\u{c}'])
                .is_empty()
                && is_ascii_space_only(t)
        }
        _ => false,
    })
}

fn is_ascii_space_only(t: &str) -> bool {
    // bytes.TrimSpace trims Unicode white space too.
    t.chars().all(char::is_whitespace)
}

struct Parser<'a> {
    items: Vec<Item>,
    idx: usize,
    parse_name: String,
    vars: Vec<String>,
    has_function: &'a dyn Fn(&str) -> bool,
    trees: &'a mut HashMap<String, List>,
    action_line: usize,
    range_depth: usize,
    depth: usize,
    nodes: usize,
    furthest: usize,
}

type PResult<T> = Result<T, ParseError>;

impl Parser<'_> {
    fn next(&mut self) -> Item {
        let item = self.items.get(self.idx).cloned().unwrap_or_else(|| {
            // The lexer always ends with EOF or an error; past it, repeat it.
            self.items.last().cloned().unwrap_or(Item {
                typ: ItemType::Eof,
                pos: 0,
                val: String::new(),
                line: 1,
            })
        });
        if self.idx < self.items.len() {
            self.furthest = self.furthest.max(self.idx);
            self.idx += 1;
        }
        item
    }

    fn backup(&mut self) {
        self.idx = self.idx.saturating_sub(1);
    }

    fn peek(&mut self) -> Item {
        let save = self.idx;
        let item = self.next();
        self.idx = save;
        item
    }

    fn next_non_space(&mut self) -> Item {
        loop {
            let item = self.next();
            if item.typ != ItemType::Space {
                return item;
            }
        }
    }

    fn peek_non_space(&mut self) -> Item {
        let item = self.next_non_space();
        self.backup();
        item
    }

    fn errorf(&self, msg: impl std::fmt::Display) -> ParseError {
        ParseError(format!(
            "template: {}:{}: {msg}",
            self.parse_name,
            self.items.get(self.furthest).map_or(1, |i| i.line)
        ))
    }

    fn unexpected(&self, token: &Item, context: &str) -> ParseError {
        if token.typ == ItemType::Error {
            let mut extra = String::new();
            if self.action_line != 0 && self.action_line != token.line {
                extra = format!(
                    " in action started at {}:{}",
                    self.parse_name, self.action_line
                );
                if token.val.ends_with(" action") {
                    extra = extra[" in action".len()..].to_string();
                }
            }
            return self.errorf(format!("{token}{extra}"));
        }
        self.errorf(format!("unexpected {token} in {context}"))
    }

    fn expect(&mut self, typ: ItemType, context: &str) -> PResult<Item> {
        let token = self.next_non_space();
        if token.typ != typ {
            return Err(self.unexpected(&token, context));
        }
        Ok(token)
    }

    fn count(&mut self) -> PResult<()> {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Err(self.errorf(format!("template has more than {MAX_NODES} nodes")));
        }
        Ok(())
    }

    fn add(&mut self, name: &str, root: List) -> PResult<()> {
        match self.trees.get(name) {
            Some(existing) if !is_empty_tree(existing) => {
                if !is_empty_tree(&root) {
                    return Err(self.errorf(format!(
                        "template: multiple definition of template {}",
                        quote(name)
                    )));
                }
                Ok(())
            }
            _ => {
                self.trees.insert(name.to_string(), root);
                Ok(())
            }
        }
    }

    fn parse_top(&mut self, name: &str) -> PResult<()> {
        let mut root = List::new();
        while self.peek().typ != ItemType::Eof {
            if self.peek().typ == ItemType::LeftDelim {
                let at = self.idx;
                self.next();
                if self.next_non_space().typ == ItemType::Define {
                    self.parse_definition()?;
                    continue;
                }
                self.idx = at;
            }
            match self.text_or_action()? {
                end @ (Parsed::End | Parsed::Else(..)) => {
                    return Err(self.errorf(format!("unexpected {}", end.describe())));
                }
                Parsed::Node(n) => root.push(n),
                Parsed::Nothing => {}
            }
        }
        self.add(name, root)
    }

    fn parse_definition(&mut self) -> PResult<()> {
        let context = "define clause";
        let token = self.next_non_space();
        if token.typ != ItemType::String && token.typ != ItemType::RawString {
            return Err(self.unexpected(&token, context));
        }
        let name = unquote(&token.val).map_err(|e| self.errorf(e))?;
        self.expect(ItemType::RightDelim, context)?;
        let saved_vars = std::mem::replace(&mut self.vars, vec!["$".to_string()]);
        let (root, end) = self.item_list()?;
        self.vars = saved_vars;
        if !matches!(end, Parsed::End) {
            return Err(self.errorf(format!("unexpected {} in {context}", end.describe())));
        }
        self.add(&name, root)
    }

    /// Parses nodes up to `{{end}}` or `{{else}}`.
    fn item_list(&mut self) -> PResult<(List, Parsed)> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(self.errorf(format!("template nests deeper than {MAX_NESTING} levels")));
        }
        let mut list = List::new();
        while self.peek_non_space().typ != ItemType::Eof {
            match self.text_or_action()? {
                Parsed::Node(n) => list.push(n),
                Parsed::Nothing => {}
                end @ (Parsed::End | Parsed::Else(..)) => {
                    self.depth -= 1;
                    return Ok((list, end));
                }
            }
        }
        Err(self.errorf("unexpected EOF"))
    }

    fn text_or_action(&mut self) -> PResult<Parsed> {
        let token = self.next_non_space();
        match token.typ {
            ItemType::Text => {
                self.count()?;
                Ok(Parsed::Node(Node::Text(token.val)))
            }
            ItemType::LeftDelim => {
                self.action_line = token.line;
                let r = self.action();
                self.action_line = 0;
                r
            }
            _ => Err(self.unexpected(&token, "input")),
        }
    }

    fn action(&mut self) -> PResult<Parsed> {
        let token = self.next_non_space();
        match token.typ {
            ItemType::Block => return self.block_control(),
            ItemType::Break | ItemType::Continue => {
                let what = if token.typ == ItemType::Break {
                    "{{break}}"
                } else {
                    "{{continue}}"
                };
                let t = self.next_non_space();
                if t.typ != ItemType::RightDelim {
                    return Err(self.unexpected(&t, what));
                }
                if self.range_depth == 0 {
                    return Err(self.errorf(format!("{what} outside {{{{range}}}}")));
                }
                return Ok(Parsed::Node(if token.typ == ItemType::Break {
                    Node::Break(token.pos)
                } else {
                    Node::Continue(token.pos)
                }));
            }
            ItemType::Else => {
                let peek = self.peek_non_space();
                if peek.typ == ItemType::If {
                    return Ok(Parsed::Else(true));
                }
                self.expect(ItemType::RightDelim, "else")?;
                return Ok(Parsed::Else(false));
            }
            ItemType::End => {
                self.expect(ItemType::RightDelim, "end")?;
                return Ok(Parsed::End);
            }
            ItemType::If => return self.control(ControlKind::If),
            ItemType::Range => return self.control(ControlKind::Range),
            ItemType::With => return self.control(ControlKind::With),
            ItemType::Template => return self.template_control(),
            _ => {}
        }
        self.backup();
        self.count()?;
        let pipe = self.pipeline("command", ItemType::RightDelim)?;
        Ok(Parsed::Node(Node::Action(pipe)))
    }

    fn control(&mut self, kind: ControlKind) -> PResult<Parsed> {
        self.count()?;
        let context = match kind {
            ControlKind::If => "if",
            ControlKind::With => "with",
            ControlKind::Range => "range",
        };
        let nvars = self.vars.len();
        let pipe = self.pipeline(context, ItemType::RightDelim)?;
        if kind == ControlKind::Range {
            self.range_depth += 1;
        }
        let (list, next) = self.item_list()?;
        if kind == ControlKind::Range {
            self.range_depth -= 1;
        }
        let mut else_list = None;
        match next {
            Parsed::Else(is_if) => {
                if kind == ControlKind::If && is_if {
                    // {{else if ...}}: the `if` is still to be read.
                    let t = self.next_non_space();
                    debug_assert_eq!(t.typ, ItemType::If);
                    let nested = self.control(ControlKind::If)?;
                    if let Parsed::Node(n) = nested {
                        else_list = Some(vec![n]);
                    }
                } else {
                    if is_if {
                        // `{{else if}}` in range/with: Go 1.19 expects `}}`.
                        let t = self.next_non_space();
                        return Err(self.unexpected(&t, "else"));
                    }
                    let (l, next) = self.item_list()?;
                    if !matches!(next, Parsed::End) {
                        return Err(self.errorf(format!("expected end; found {}", next.describe())));
                    }
                    else_list = Some(l);
                }
            }
            Parsed::End => {}
            _ => {}
        }
        self.vars.truncate(nvars);
        Ok(Parsed::Node(Node::Control(Box::new(Control {
            kind,
            pipe,
            list,
            else_list,
        }))))
    }

    fn block_control(&mut self) -> PResult<Parsed> {
        let context = "block clause";
        let token = self.next_non_space();
        let name = self.template_name(&token, context)?;
        let pipe = self.pipeline(context, ItemType::RightDelim)?;
        let saved_vars = std::mem::replace(&mut self.vars, vec!["$".to_string()]);
        let saved_range = std::mem::replace(&mut self.range_depth, 0);
        let (root, end) = self.item_list()?;
        self.vars = saved_vars;
        self.range_depth = saved_range;
        if !matches!(end, Parsed::End) {
            return Err(self.errorf(format!("unexpected {} in {context}", end.describe())));
        }
        self.add(&name, root)?;
        Ok(Parsed::Node(Node::Template {
            pos: token.pos,
            name,
            pipe: Some(pipe),
        }))
    }

    fn template_control(&mut self) -> PResult<Parsed> {
        let context = "template clause";
        let token = self.next_non_space();
        let name = self.template_name(&token, context)?;
        let mut pipe = None;
        if self.next_non_space().typ != ItemType::RightDelim {
            self.backup();
            pipe = Some(self.pipeline(context, ItemType::RightDelim)?);
        }
        self.count()?;
        Ok(Parsed::Node(Node::Template {
            pos: token.pos,
            name,
            pipe,
        }))
    }

    fn template_name(&mut self, token: &Item, context: &str) -> PResult<String> {
        match token.typ {
            ItemType::String | ItemType::RawString => {
                unquote(&token.val).map_err(|e| self.errorf(e))
            }
            _ => Err(self.unexpected(token, context)),
        }
    }

    fn pipeline(&mut self, context: &str, end: ItemType) -> PResult<Pipe> {
        let token = self.peek_non_space();
        let mut pipe = Pipe {
            pos: token.pos,
            is_assign: false,
            decl: Vec::new(),
            cmds: Vec::new(),
        };
        loop {
            let v = self.peek_non_space();
            if v.typ != ItemType::Variable {
                break;
            }
            let at = self.idx;
            self.next_non_space();
            let after = self.peek();
            let next = self.peek_non_space();
            if next.typ == ItemType::Assign || next.typ == ItemType::Declare {
                pipe.is_assign = next.typ == ItemType::Assign;
                self.next_non_space();
                pipe.decl.push(v.val.clone());
                self.vars.push(v.val);
                break;
            } else if next.typ == ItemType::Char && next.val == "," {
                self.next_non_space();
                pipe.decl.push(v.val.clone());
                self.vars.push(v.val);
                if context == "range" && pipe.decl.len() < 2 {
                    match self.peek_non_space().typ {
                        ItemType::Variable | ItemType::RightDelim | ItemType::RightParen => {
                            continue;
                        }
                        _ => return Err(self.errorf("range can only initialize variables")),
                    }
                }
                return Err(self.errorf(format!("too many declarations in {context}")));
            } else {
                let _ = after;
                self.idx = at;
                break;
            }
        }
        loop {
            let token = self.next_non_space();
            if token.typ == end {
                self.check_pipeline(&pipe, context)?;
                return Ok(pipe);
            }
            match token.typ {
                ItemType::Bool
                | ItemType::CharConstant
                | ItemType::Complex
                | ItemType::Dot
                | ItemType::Field
                | ItemType::Identifier
                | ItemType::Number
                | ItemType::Nil
                | ItemType::RawString
                | ItemType::String
                | ItemType::Variable
                | ItemType::LeftParen => {
                    self.backup();
                    let cmd = self.command()?;
                    pipe.cmds.push(cmd);
                }
                _ => return Err(self.unexpected(&token, context)),
            }
        }
    }

    fn check_pipeline(&self, pipe: &Pipe, context: &str) -> PResult<()> {
        if pipe.cmds.is_empty() {
            return Err(self.errorf(format!("missing value for {context}")));
        }
        for (i, c) in pipe.cmds.iter().enumerate().skip(1) {
            if matches!(
                c.args.first(),
                Some(Arg::Bool(..) | Arg::Dot(_) | Arg::Nil(_) | Arg::Number(..) | Arg::String(..))
            ) {
                return Err(self.errorf(format!(
                    "non executable command in pipeline stage {}",
                    i + 1
                )));
            }
        }
        Ok(())
    }

    fn command(&mut self) -> PResult<Command> {
        let mut cmd = Command {
            pos: self.peek_non_space().pos,
            args: Vec::new(),
        };
        loop {
            self.peek_non_space();
            if let Some(op) = self.operand()? {
                self.count()?;
                cmd.args.push(op);
            }
            let token = self.next();
            match token.typ {
                ItemType::Space => continue,
                ItemType::RightDelim | ItemType::RightParen => self.backup(),
                ItemType::Pipe => {}
                _ => return Err(self.unexpected(&token, "operand")),
            }
            break;
        }
        if cmd.args.is_empty() {
            return Err(self.errorf("empty command"));
        }
        Ok(cmd)
    }

    fn operand(&mut self) -> PResult<Option<Arg>> {
        let Some(node) = self.term()? else {
            return Ok(None);
        };
        if self.peek().typ != ItemType::Field {
            return Ok(Some(node));
        }
        let pos = self.peek().pos;
        let mut fields = Vec::new();
        while self.peek().typ == ItemType::Field {
            let f = self.next();
            fields.push(f.val[1..].to_string());
        }
        Ok(Some(match node {
            Arg::Field(p, mut ident) => {
                ident.extend(fields);
                let _ = p;
                Arg::Field(pos, ident)
            }
            Arg::Variable(_, mut ident) => {
                ident.extend(fields);
                Arg::Variable(pos, ident)
            }
            Arg::Bool(..) | Arg::String(..) | Arg::Number(..) | Arg::Nil(_) | Arg::Dot(_) => {
                return Err(self.errorf(format!(
                    "unexpected . after term {}",
                    quote(&node.to_string())
                )));
            }
            other => Arg::Chain(pos, Box::new(other), fields),
        }))
    }

    fn term(&mut self) -> PResult<Option<Arg>> {
        let token = self.next_non_space();
        Ok(Some(match token.typ {
            ItemType::Identifier => {
                if !(self.has_function)(&token.val) {
                    return Err(self.errorf(format!("function {} not defined", quote(&token.val))));
                }
                Arg::Identifier(token.pos, token.val)
            }
            ItemType::Dot => Arg::Dot(token.pos),
            ItemType::Nil => Arg::Nil(token.pos),
            ItemType::Variable => {
                let ident: Vec<String> = token.val.split('.').map(str::to_string).collect();
                if !self.vars.iter().any(|v| *v == ident[0]) {
                    return Err(self.errorf(format!("undefined variable {}", quote(&ident[0]))));
                }
                Arg::Variable(token.pos, ident)
            }
            ItemType::Field => Arg::Field(
                token.pos,
                token.val[1..].split('.').map(str::to_string).collect(),
            ),
            ItemType::Bool => Arg::Bool(token.pos, token.val == "true"),
            ItemType::CharConstant | ItemType::Complex | ItemType::Number => {
                let n = new_number(&token.val, token.typ).map_err(|e| self.errorf(e))?;
                Arg::Number(token.pos, Box::new(n))
            }
            ItemType::LeftParen => {
                self.depth += 1;
                if self.depth > MAX_NESTING {
                    return Err(
                        self.errorf(format!("template nests deeper than {MAX_NESTING} levels"))
                    );
                }
                let p = self.pipeline("parenthesized pipeline", ItemType::RightParen)?;
                self.depth -= 1;
                Arg::Pipe(Box::new(p))
            }
            ItemType::String | ItemType::RawString => {
                let s = unquote(&token.val).map_err(|e| self.errorf(e))?;
                Arg::String(token.pos, token.val, s)
            }
            _ => {
                self.backup();
                return Ok(None);
            }
        }))
    }
}

/// What `text_or_action` found.
enum Parsed {
    Node(Node),
    /// `{{end}}`
    End,
    /// `{{else}}`; true when `if` follows (`{{else if}}`).
    Else(bool),
    #[allow(dead_code)]
    Nothing,
}

impl Parsed {
    fn describe(&self) -> &'static str {
        match self {
            Parsed::End => "{{end}}",
            Parsed::Else(_) => "{{else}}",
            _ => "node",
        }
    }
}

fn quote(s: &str) -> String {
    xfn_gocompat::gofmt::quote(s)
}

/// Go's `strconv.Unquote` for the three quote forms; the only error is
/// `invalid syntax`.
pub fn unquote(s: &str) -> Result<String, &'static str> {
    const BAD: &str = "invalid syntax";
    let b = s.as_bytes();
    if b.len() < 2 {
        return Err(BAD);
    }
    let q = b[0];
    if q != b[b.len() - 1] {
        return Err(BAD);
    }
    let inner = &s[1..s.len() - 1];
    match q {
        b'`' => {
            if inner.contains('`') {
                return Err(BAD);
            }
            Ok(inner.replace('\r', ""))
        }
        b'"' | b'\'' => {
            let mut out: Vec<u8> = Vec::new();
            let mut rest = inner;
            let mut runes = 0;
            while !rest.is_empty() {
                let (bytes, tail) = unquote_char(rest, q as char)?;
                out.extend_from_slice(&bytes);
                rest = tail;
                runes += 1;
            }
            if q == b'\'' && runes != 1 {
                return Err(BAD);
            }
            Ok(xfn_gocompat::value::go_lossy_utf8(&out))
        }
        _ => Err(BAD),
    }
}

/// Go's `strconv.UnquoteChar`: the bytes of one (possibly escaped) character
/// and the rest.
fn unquote_char(s: &str, quote: char) -> Result<(Vec<u8>, &str), &'static str> {
    const BAD: &str = "invalid syntax";
    let mut chars = s.chars();
    let c = chars.next().ok_or(BAD)?;
    if c == quote && (quote == '\'' || quote == '"') {
        return Err(BAD);
    }
    if c == '\n' {
        return Err(BAD);
    }
    if c != '\\' {
        let mut buf = [0u8; 4];
        return Ok((c.encode_utf8(&mut buf).as_bytes().to_vec(), chars.as_str()));
    }
    let e = chars.next().ok_or(BAD)?;
    let rest = chars.as_str();
    let simple = |c: char| -> (Vec<u8>, &str) { (vec![c as u8], rest) };
    Ok(match e {
        'a' => simple('\u{7}'),
        'b' => simple('\u{8}'),
        'f' => simple('\u{c}'),
        'n' => simple('\n'),
        'r' => simple('\r'),
        't' => simple('\t'),
        'v' => simple('\u{b}'),
        '\\' => simple('\\'),
        '\'' | '"' => {
            if e != quote {
                return Err(BAD);
            }
            simple(e)
        }
        'x' | 'u' | 'U' => {
            let n = match e {
                'x' => 2,
                'u' => 4,
                _ => 8,
            };
            if rest.len() < n || !rest.is_char_boundary(n) {
                return Err(BAD);
            }
            let v = u32::from_str_radix(&rest[..n], 16).map_err(|_| BAD)?;
            if rest[..n].starts_with(['+', '-']) {
                return Err(BAD);
            }
            if e == 'x' {
                return Ok((vec![v as u8], &rest[n..]));
            }
            let c = char::from_u32(v).ok_or(BAD)?;
            let mut buf = [0u8; 4];
            (c.encode_utf8(&mut buf).as_bytes().to_vec(), &rest[n..])
        }
        '0'..='7' => {
            if rest.len() < 2 {
                return Err(BAD);
            }
            let digits = format!("{e}{}", &rest[..2]);
            let v = u32::from_str_radix(&digits, 8).map_err(|_| BAD)?;
            if v > 255 {
                return Err(BAD);
            }
            (vec![v as u8], &rest[2..])
        }
        _ => return Err(BAD),
    })
}

/// Go's `newNumber`: a number, character or complex constant.
fn new_number(text: &str, typ: ItemType) -> Result<Number, String> {
    let mut n = Number {
        text: text.to_string(),
        ..Number::default()
    };
    if typ == ItemType::CharConstant {
        let (bytes, tail) = unquote_char(&text[1..], '\'').map_err(str::to_string)?;
        if tail != "'" {
            return Err(format!("malformed character constant: {text}"));
        }
        let c = String::from_utf8_lossy(&bytes)
            .chars()
            .next()
            .unwrap_or('\u{fffd}');
        let c = if bytes.len() == 1 {
            bytes[0] as u32
        } else {
            c as u32
        };
        n.is_int = true;
        n.is_uint = true;
        n.is_float = true;
        n.int = i64::from(c);
        n.float = f64::from(c);
        return Ok(n);
    }
    if typ == ItemType::Complex || text.ends_with('i') {
        return Err(format!(
            "complex constant {text} is not supported by xfn's template engine"
        ));
    }
    let uint = parse_int_base0(text)
        .filter(|(neg, _)| !neg)
        .map(|(_, v)| v);
    let int = parse_int_base0(text).and_then(|(neg, v)| {
        if neg {
            if v <= 1u64 << 63 {
                Some((v as i64).wrapping_neg())
            } else {
                None
            }
        } else if v <= i64::MAX as u64 {
            Some(v as i64)
        } else {
            None
        }
    });
    if let Some(u) = uint {
        n.is_uint = true;
        let _ = u;
    }
    if let Some(i) = int {
        n.is_int = true;
        n.int = i;
        if i == 0 {
            n.is_uint = true;
        }
    }
    if n.is_int {
        n.is_float = true;
        n.float = n.int as f64;
    } else if let Some(u) = uint {
        n.is_float = true;
        n.float = u as f64;
    } else if let Some(f) = parse_float(text) {
        if !text.contains(['.', 'e', 'E', 'p', 'P']) {
            return Err(format!("integer overflow: {}", quote(text)));
        }
        n.is_float = true;
        n.float = f;
        if (f as i64) as f64 == f && f.is_finite() && f.abs() < 9.2e18 {
            n.is_int = true;
            n.int = f as i64;
        }
        if (0.0..1.8e19).contains(&f) && (f as u64) as f64 == f {
            n.is_uint = true;
        }
    }
    if !n.is_int && !n.is_uint && !n.is_float {
        return Err(format!("illegal number syntax: {}", quote(text)));
    }
    Ok(n)
}

/// `strconv.ParseInt(s, 0, 64)`'s syntax: sign, base prefix, underscores
/// only with a prefix or between digits. Returns (negative, magnitude).
fn parse_int_base0(s: &str) -> Option<(bool, u64)> {
    let (neg, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let (base, digits, prefixed) =
        if let Some(r) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
            (16, r, true)
        } else if let Some(r) = body.strip_prefix("0o").or_else(|| body.strip_prefix("0O")) {
            (8, r, true)
        } else if let Some(r) = body.strip_prefix("0b").or_else(|| body.strip_prefix("0B")) {
            (2, r, true)
        } else if body.len() > 1 && body.starts_with('0') {
            (8, &body[1..], true)
        } else {
            (10, body, false)
        };
    let _ = prefixed;
    if !underscore_ok(body) {
        return None;
    }
    let clean: String = digits.chars().filter(|&c| c != '_').collect();
    if clean.is_empty() {
        return None;
    }
    u64::from_str_radix(&clean, base).ok().map(|v| (neg, v))
}

/// Go's `underscoreOK`: underscores only between digits or after a prefix.
fn underscore_ok(s: &str) -> bool {
    if !s.contains('_') {
        return true;
    }
    let b = s.as_bytes();
    let mut saw = b'^';
    let mut i = 0;
    if b.len() >= 2 && b[0] == b'0' && matches!(b[1] | 0x20, b'x' | b'o' | b'b') {
        i = 2;
        saw = b'0';
    }
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_hexdigit() {
            saw = b'0';
        } else if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else {
            if saw == b'_' {
                return false;
            }
            saw = b'!';
        }
        i += 1;
    }
    saw != b'_'
}

fn parse_float(s: &str) -> Option<f64> {
    let lower = s.to_ascii_lowercase();
    if lower.contains("0x") || lower.contains('_') || lower.contains("inf") || lower.contains("nan")
    {
        return None;
    }
    s.parse::<f64>().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        let mut trees = HashMap::new();
        let f = |n: &str| matches!(n, "printf" | "len" | "eq");
        parse("t", text, "", "", &f, &mut trees)
            .err()
            .map(|e| e.0)
            .unwrap_or_default()
    }

    #[test]
    fn parse_errors_like_go() {
        assert_eq!(
            err("{{ foo }}"),
            "template: t:1: function \"foo\" not defined"
        );
        assert_eq!(
            err("a\n{{ $x }}"),
            "template: t:2: undefined variable \"$x\""
        );
        assert_eq!(err("{{ if .a }}"), "template: t:1: unexpected EOF");
        assert_eq!(err("{{ end }}"), "template: t:1: unexpected {{end}}");
        assert_eq!(
            err("{{ .a | 3 }}"),
            "template: t:1: non executable command in pipeline stage 2"
        );
        assert_eq!(err("{{ }}"), "template: t:1: missing value for command");
        assert_eq!(
            err("{{ \"a\".b }}"),
            "template: t:1: unexpected . after term \"\\\"a\\\"\""
        );
        assert_eq!(
            err("{{ break }}"),
            "template: t:1: {{break}} outside {{range}}"
        );
        assert_eq!(
            err("{{ .x\n"),
            "template: t:2: unclosed action started at t:1"
        );
        assert_eq!(
            err("{{ 99999999999999999999 }}"),
            "template: t:1: integer overflow: \"99999999999999999999\""
        );
    }

    #[test]
    fn node_strings() {
        let mut trees = HashMap::new();
        let f = |_: &str| true;
        parse(
            "t",
            "{{ $x := printf \"%d\" (len .a.b) | eq 3 }}{{ (.a).b }}",
            "",
            "",
            &f,
            &mut trees,
        )
        .expect("parses");
        let root = &trees["t"];
        assert_eq!(
            root[0].to_string(),
            "{{$x := printf \"%d\" (len .a.b) | eq 3}}"
        );
        assert_eq!(root[1].to_string(), "{{(.a).b}}");
    }

    #[test]
    fn unquotes_like_go() {
        assert_eq!(unquote("\"a\\tb\\x41\\u00e9\"").as_deref(), Ok("a\tbAé"));
        assert_eq!(unquote("`a\\n`").as_deref(), Ok("a\\n"));
        assert_eq!(unquote("\"\\q\""), Err("invalid syntax"));
    }
}
