//! Go's `fmt.Sprintf` and `strconv.FormatFloat`/`Quote`, for the values P&T
//! formats (`string.fmt`, `combine.string.fmt` and every `%v`).
//!
//! Supported: all verbs that apply to `bool`, `int64`, `float64`, `string`,
//! `nil`, `[]interface {}` and `map[string]interface {}` (`%v %+v %#v %T %t
//! %d %b %o %O %x %X %c %q %U %e %E %f %F %g %G %s`), flags `+ - # 0 space`,
//! width and precision (also `*`), explicit argument indexes (`%[2]d`), and
//! the error forms (`%!d(float64=3)`, `%!s(MISSING)`, `%!(EXTRA ...)`,
//! `%!(NOVERB)`, `%!d(BADINDEX)`, `%!(BADWIDTH)`, `%!(BADPREC)`).
//! `%p` is reported as a bad verb for every type (Go prints an address for
//! maps and slices).

use crate::value::GoValue;

/// Formats like Go's `fmt.Sprintf(format, args...)`.
pub fn sprintf(format: &str, args: &[GoValue]) -> String {
    let mut p = Printer::default();
    p.do_printf(format, args);
    p.buf
}

/// Formats one value like Go's `fmt.Sprintf("%v", v)`.
pub fn sprint_v(v: &GoValue) -> String {
    sprintf("%v", std::slice::from_ref(v))
}

#[derive(Debug, Clone, Copy, Default)]
struct Flags {
    plus: bool,
    minus: bool,
    sharp: bool,
    space: bool,
    zero: bool,
    plus_v: bool,
    sharp_v: bool,
    wid: i64,
    wid_present: bool,
    prec: i64,
    prec_present: bool,
}

#[derive(Default)]
struct Printer {
    buf: String,
    f: Flags,
    reordered: bool,
    good_arg_num: bool,
}

const TOO_LARGE: i64 = 1_000_000;

fn parse_num(s: &[u8], start: usize, end: usize) -> (i64, bool, usize) {
    if start >= end {
        return (0, false, end);
    }
    let mut num: i64 = 0;
    let mut is_num = false;
    let mut i = start;
    while i < end && s[i].is_ascii_digit() {
        if !(-TOO_LARGE..=TOO_LARGE).contains(&num) {
            return (0, false, end);
        }
        num = num * 10 + i64::from(s[i] - b'0');
        is_num = true;
        i += 1;
    }
    (num, is_num, i)
}

/// `[n]` at the start of `s`: (zero-based index, bytes consumed, ok).
fn parse_arg_number(s: &[u8]) -> (i64, usize, bool) {
    if s.len() < 3 {
        return (0, 1, false);
    }
    for i in 1..s.len() {
        if s[i] == b']' {
            let (width, ok, newi) = parse_num(s, 1, i);
            if !ok || newi != i {
                return (0, i + 1, false);
            }
            return (width - 1, i + 1, true);
        }
    }
    (0, 1, false)
}

impl Printer {
    fn arg_number(
        &mut self,
        arg_num: usize,
        format: &[u8],
        i: usize,
        num_args: usize,
    ) -> (usize, usize, bool) {
        if format.len() <= i || format[i] != b'[' {
            return (arg_num, i, false);
        }
        self.reordered = true;
        let (index, wid, ok) = parse_arg_number(&format[i..]);
        if ok && 0 <= index && (index as usize) < num_args {
            return (index as usize, i + wid, true);
        }
        self.good_arg_num = false;
        (arg_num, i + wid, ok)
    }

    fn int_from_arg(args: &[GoValue], arg_num: usize) -> (i64, bool, usize) {
        if arg_num >= args.len() {
            return (0, false, arg_num);
        }
        let (mut num, mut is_int) = match &args[arg_num] {
            GoValue::Int(i) => (*i, true),
            _ => (0, false),
        };
        if !(-TOO_LARGE..=TOO_LARGE).contains(&num) {
            num = 0;
            is_int = false;
        }
        (num, is_int, arg_num + 1)
    }

    fn do_printf(&mut self, format: &str, args: &[GoValue]) {
        let fb = format.as_bytes();
        let end = fb.len();
        let mut arg_num: usize = 0;
        let mut after_index;
        self.reordered = false;
        let mut i = 0;
        'format_loop: while i < end {
            self.good_arg_num = true;
            let lasti = i;
            while i < end && fb[i] != b'%' {
                i += 1;
            }
            if i > lasti {
                self.buf.push_str(&format[lasti..i]);
            }
            if i >= end {
                break;
            }
            i += 1; // skip %
            self.f = Flags::default();
            'simple: while i < end {
                let c = fb[i];
                match c {
                    b'#' => self.f.sharp = true,
                    b'0' => self.f.zero = !self.f.minus,
                    b'+' => self.f.plus = true,
                    b'-' => {
                        self.f.minus = true;
                        self.f.zero = false;
                    }
                    b' ' => self.f.space = true,
                    _ => {
                        if c.is_ascii_lowercase() && arg_num < args.len() {
                            if c == b'v' {
                                self.f.sharp_v = self.f.sharp;
                                self.f.sharp = false;
                                self.f.plus_v = self.f.plus;
                                self.f.plus = false;
                            }
                            self.print_arg(&args[arg_num], c as char);
                            arg_num += 1;
                            i += 1;
                            continue 'format_loop;
                        }
                        break 'simple;
                    }
                }
                i += 1;
            }

            let (a, ni, ai) = self.arg_number(arg_num, fb, i, args.len());
            arg_num = a;
            i = ni;
            after_index = ai;

            if i < end && fb[i] == b'*' {
                i += 1;
                let (w, present, na) = Self::int_from_arg(args, arg_num);
                self.f.wid = w;
                self.f.wid_present = present;
                arg_num = na;
                if !present {
                    self.buf.push_str("%!(BADWIDTH)");
                }
                if self.f.wid < 0 {
                    self.f.wid = -self.f.wid;
                    self.f.minus = true;
                    self.f.zero = false;
                }
                after_index = false;
            } else {
                let (w, present, ni) = parse_num(fb, i, end);
                self.f.wid = w;
                self.f.wid_present = present;
                i = ni;
                if after_index && self.f.wid_present {
                    self.good_arg_num = false;
                }
            }

            if i + 1 < end && fb[i] == b'.' {
                i += 1;
                if after_index {
                    self.good_arg_num = false;
                }
                let (a, ni, ai) = self.arg_number(arg_num, fb, i, args.len());
                arg_num = a;
                i = ni;
                after_index = ai;
                if i < end && fb[i] == b'*' {
                    i += 1;
                    let (p, present, na) = Self::int_from_arg(args, arg_num);
                    self.f.prec = p;
                    self.f.prec_present = present;
                    arg_num = na;
                    if self.f.prec < 0 {
                        self.f.prec = 0;
                        self.f.prec_present = false;
                    }
                    if !self.f.prec_present {
                        self.buf.push_str("%!(BADPREC)");
                    }
                    after_index = false;
                } else {
                    let (p, present, ni) = parse_num(fb, i, end);
                    self.f.prec = p;
                    self.f.prec_present = present;
                    i = ni;
                    if !self.f.prec_present {
                        self.f.prec = 0;
                        self.f.prec_present = true;
                    }
                }
            }

            if !after_index {
                let (a, ni, _) = self.arg_number(arg_num, fb, i, args.len());
                arg_num = a;
                i = ni;
            }

            if i >= end {
                self.buf.push_str("%!(NOVERB)");
                break;
            }

            let verb = format[i..].chars().next().unwrap_or('\u{FFFD}');
            i += verb.len_utf8();

            if verb == '%' {
                self.buf.push('%');
            } else if !self.good_arg_num {
                self.buf.push_str("%!");
                self.buf.push(verb);
                self.buf.push_str("(BADINDEX)");
            } else if arg_num >= args.len() {
                self.buf.push_str("%!");
                self.buf.push(verb);
                self.buf.push_str("(MISSING)");
            } else {
                if verb == 'v' {
                    self.f.sharp_v = self.f.sharp;
                    self.f.sharp = false;
                    self.f.plus_v = self.f.plus;
                    self.f.plus = false;
                }
                self.print_arg(&args[arg_num], verb);
                arg_num += 1;
            }
        }

        if !self.reordered && arg_num < args.len() {
            self.f = Flags::default();
            self.buf.push_str("%!(EXTRA ");
            for (n, arg) in args[arg_num..].iter().enumerate() {
                if n > 0 {
                    self.buf.push_str(", ");
                }
                if let GoValue::Nil = arg {
                    self.buf.push_str("<nil>");
                } else {
                    self.buf.push_str(arg.type_name());
                    self.buf.push('=');
                    self.print_arg(arg, 'v');
                }
            }
            self.buf.push(')');
        }
    }

    fn print_arg(&mut self, arg: &GoValue, verb: char) {
        if let GoValue::Nil = arg {
            match verb {
                'T' | 'v' => self.pad_string("<nil>"),
                _ => self.bad_verb(verb, arg),
            }
            return;
        }
        match verb {
            'T' => {
                self.fmt_s(arg.type_name());
                return;
            }
            'p' => {
                self.bad_verb(verb, arg);
                return;
            }
            _ => {}
        }
        self.print_value(arg, verb);
    }

    fn print_value(&mut self, v: &GoValue, verb: char) {
        match v {
            // A nil slice or map prints as an empty one, except with %#v.
            GoValue::NilSlice if self.f.sharp_v => self.buf.push_str("[]interface {}(nil)"),
            GoValue::NilMap if self.f.sharp_v => {
                self.buf.push_str("map[string]interface {}(nil)");
            }
            GoValue::NilSlice => self.buf.push_str("[]"),
            GoValue::NilMap => self.buf.push_str("map[]"),
            GoValue::Nil => {
                // Only reachable for elements of slices and maps.
                if self.f.sharp_v {
                    self.buf.push_str("interface {}(nil)");
                } else {
                    self.pad_string("<nil>");
                }
            }
            GoValue::Bool(b) => match verb {
                't' | 'v' => self.pad_string(if *b { "true" } else { "false" }),
                _ => self.bad_verb(verb, v),
            },
            GoValue::Int(i) => self.fmt_integer(*i, verb, v),
            GoValue::Float(x) => match verb {
                'v' => self.fmt_float(*x, 'g', -1),
                'b' | 'g' | 'G' | 'x' | 'X' => self.fmt_float(*x, verb, -1),
                'f' | 'e' | 'E' => self.fmt_float(*x, verb, 6),
                'F' => self.fmt_float(*x, 'f', 6),
                _ => self.bad_verb(verb, v),
            },
            GoValue::String(s) => match verb {
                'v' => {
                    if self.f.sharp_v {
                        self.fmt_q(s)
                    } else {
                        self.fmt_s(s)
                    }
                }
                's' => self.fmt_s(s),
                'x' => self.fmt_sx(s, false),
                'X' => self.fmt_sx(s, true),
                'q' => self.fmt_q(s),
                _ => self.bad_verb(verb, v),
            },
            GoValue::Slice(items) => {
                if self.f.sharp_v {
                    self.buf.push_str("[]interface {}{");
                    for (n, item) in items.iter().enumerate() {
                        if n > 0 {
                            self.buf.push_str(", ");
                        }
                        self.print_value(item, verb);
                    }
                    self.buf.push('}');
                } else {
                    self.buf.push('[');
                    for (n, item) in items.iter().enumerate() {
                        if n > 0 {
                            self.buf.push(' ');
                        }
                        self.print_value(item, verb);
                    }
                    self.buf.push(']');
                }
            }
            GoValue::Map(m) => {
                if self.f.sharp_v {
                    self.buf.push_str("map[string]interface {}{");
                } else {
                    self.buf.push_str("map[");
                }
                for (n, (k, item)) in m.iter().enumerate() {
                    if n > 0 {
                        if self.f.sharp_v {
                            self.buf.push_str(", ");
                        } else {
                            self.buf.push(' ');
                        }
                    }
                    self.print_value(&GoValue::String(k.clone()), verb);
                    self.buf.push(':');
                    self.print_value(item, verb);
                }
                self.buf.push(if self.f.sharp_v { '}' } else { ']' });
            }
        }
    }

    fn bad_verb(&mut self, verb: char, arg: &GoValue) {
        self.buf.push_str("%!");
        self.buf.push(verb);
        self.buf.push('(');
        match arg {
            GoValue::Nil => self.buf.push_str("<nil>"),
            _ => {
                self.buf.push_str(arg.type_name());
                self.buf.push('=');
                self.print_arg(arg, 'v');
            }
        }
        self.buf.push(')');
    }

    fn write_padding(&mut self, n: i64) {
        if n <= 0 {
            return;
        }
        let c = if self.f.zero { '0' } else { ' ' };
        for _ in 0..n {
            self.buf.push(c);
        }
    }

    fn pad(&mut self, s: &str) {
        if !self.f.wid_present || self.f.wid == 0 {
            self.buf.push_str(s);
            return;
        }
        let width = self.f.wid - s.chars().count() as i64;
        if !self.f.minus {
            self.write_padding(width);
            self.buf.push_str(s);
        } else {
            self.buf.push_str(s);
            self.write_padding(width);
        }
    }

    fn pad_string(&mut self, s: &str) {
        self.pad(s);
    }

    fn truncate<'a>(&self, s: &'a str) -> &'a str {
        if self.f.prec_present {
            let mut n = self.f.prec;
            for (i, _) in s.char_indices() {
                n -= 1;
                if n < 0 {
                    return &s[..i];
                }
            }
        }
        s
    }

    fn fmt_s(&mut self, s: &str) {
        let s = self.truncate(s).to_owned();
        self.pad_string(&s);
    }

    fn fmt_q(&mut self, s: &str) {
        let s = self.truncate(s).to_owned();
        if self.f.sharp && can_backquote(&s) {
            self.pad_string(&format!("`{s}`"));
            return;
        }
        let q = if self.f.plus {
            quote_ascii(&s)
        } else {
            quote(&s)
        };
        self.pad(&q);
    }

    fn fmt_sx(&mut self, s: &str, upper: bool) {
        let digits: &[u8; 16] = if upper {
            b"0123456789ABCDEF"
        } else {
            b"0123456789abcdef"
        };
        let x = if upper { 'X' } else { 'x' };
        let bytes = s.as_bytes();
        let mut length = bytes.len() as i64;
        if self.f.prec_present && self.f.prec < length {
            length = self.f.prec;
        }
        let mut width = 2 * length;
        if width > 0 {
            if self.f.space {
                if self.f.sharp {
                    width *= 2;
                }
                width += length - 1;
            } else if self.f.sharp {
                width += 2;
            }
        } else {
            if self.f.wid_present {
                let w = self.f.wid;
                self.write_padding(w);
            }
            return;
        }
        if self.f.wid_present && self.f.wid > width && !self.f.minus {
            let w = self.f.wid - width;
            self.write_padding(w);
        }
        if self.f.sharp {
            self.buf.push('0');
            self.buf.push(x);
        }
        for (i, c) in bytes.iter().take(length as usize).enumerate() {
            if self.f.space && i > 0 {
                self.buf.push(' ');
                if self.f.sharp {
                    self.buf.push('0');
                    self.buf.push(x);
                }
            }
            self.buf.push(digits[(c >> 4) as usize] as char);
            self.buf.push(digits[(c & 0xF) as usize] as char);
        }
        if self.f.wid_present && self.f.wid > width && self.f.minus {
            let w = self.f.wid - width;
            self.write_padding(w);
        }
    }

    fn fmt_integer(&mut self, v: i64, verb: char, arg: &GoValue) {
        match verb {
            'v' | 'd' => self.fmt_int_base(v, 10, verb, false),
            'b' => self.fmt_int_base(v, 2, verb, false),
            'o' | 'O' => self.fmt_int_base(v, 8, verb, false),
            'x' => self.fmt_int_base(v, 16, verb, false),
            'X' => self.fmt_int_base(v, 16, verb, true),
            'c' => {
                let c = rune_of(v as u64);
                self.pad(&c.to_string());
            }
            'q' => {
                let c = rune_of(v as u64);
                let q = quote_rune(c, self.f.plus);
                self.pad(&q);
            }
            'U' => self.fmt_unicode(v as u64),
            _ => self.bad_verb(verb, arg),
        }
    }

    fn fmt_int_base(&mut self, v: i64, base: u64, verb: char, upper: bool) {
        let digits: &[u8] = if upper {
            b"0123456789ABCDEFX"
        } else {
            b"0123456789abcdefx"
        };
        let negative = v < 0;
        let mut u = v.unsigned_abs();
        let mut prec: i64 = 0;
        if self.f.prec_present {
            prec = self.f.prec;
            if prec == 0 && u == 0 {
                let old = self.f.zero;
                self.f.zero = false;
                let w = self.f.wid;
                self.write_padding(w);
                self.f.zero = old;
                return;
            }
        } else if self.f.zero && !self.f.minus && self.f.wid_present {
            prec = self.f.wid;
            if negative || self.f.plus || self.f.space {
                prec -= 1;
            }
        }
        let mut out: Vec<u8> = Vec::new();
        while u >= base {
            out.push(digits[(u % base) as usize]);
            u /= base;
        }
        out.push(digits[u as usize]);
        while (out.len() as i64) < prec {
            out.push(b'0');
        }
        if self.f.sharp {
            match base {
                2 => out.extend_from_slice(b"b0"),
                8 if out.last() != Some(&b'0') => out.push(b'0'),
                16 => {
                    out.push(digits[16]);
                    out.push(b'0');
                }
                _ => {}
            }
        }
        if verb == 'O' {
            out.extend_from_slice(b"o0");
        }
        if negative {
            out.push(b'-');
        } else if self.f.plus {
            out.push(b'+');
        } else if self.f.space {
            out.push(b' ');
        }
        out.reverse();
        let s = String::from_utf8(out).unwrap_or_default();
        let old = self.f.zero;
        self.f.zero = false;
        self.pad(&s);
        self.f.zero = old;
    }

    fn fmt_unicode(&mut self, u: u64) {
        let mut prec: i64 = 4;
        if self.f.prec_present && self.f.prec > 4 {
            prec = self.f.prec;
        }
        let mut hex = format!("{u:X}");
        while (hex.len() as i64) < prec {
            hex.insert(0, '0');
        }
        let mut s = format!("U+{hex}");
        if self.f.sharp
            && let Some(c) = u32::try_from(u).ok().and_then(char::from_u32)
            && is_print(c)
        {
            s.push_str(&format!(" '{c}'"));
        }
        let old = self.f.zero;
        self.f.zero = false;
        self.pad(&s);
        self.f.zero = old;
    }

    fn fmt_float(&mut self, v: f64, verb: char, prec: i32) {
        let prec = if self.f.prec_present {
            self.f.prec as i32
        } else {
            prec
        };
        let formatted = format_float(v, verb as u8, prec);
        // num[0] is the sign: '+', '-' or (for a space flag) ' '.
        let mut num: Vec<u8> = if formatted.starts_with('-') || formatted.starts_with('+') {
            formatted.into_bytes()
        } else {
            let mut n = vec![b'+'];
            n.extend_from_slice(formatted.as_bytes());
            n
        };
        if self.f.space && num[0] == b'+' && !self.f.plus {
            num[0] = b' ';
        }
        if num.len() > 1 && (num[1] == b'I' || num[1] == b'N') {
            let old = self.f.zero;
            self.f.zero = false;
            if num[1] == b'N' && !self.f.space && !self.f.plus {
                num.remove(0);
            }
            let s = String::from_utf8(num).unwrap_or_default();
            self.pad(&s);
            self.f.zero = old;
            return;
        }
        if self.f.sharp && verb != 'b' {
            let mut digits: i32 = 0;
            if matches!(verb, 'v' | 'g' | 'G' | 'x') {
                digits = prec;
                if digits == -1 {
                    digits = 6;
                }
            }
            let mut tail: Vec<u8> = Vec::new();
            let mut has_point = false;
            let mut saw_nonzero = false;
            let mut i = 1;
            while i < num.len() {
                match num[i] {
                    b'.' => has_point = true,
                    b'p' | b'P' => {
                        tail.extend_from_slice(&num[i..]);
                        num.truncate(i);
                        break;
                    }
                    b'e' | b'E' if verb != 'x' && verb != 'X' => {
                        tail.extend_from_slice(&num[i..]);
                        num.truncate(i);
                        break;
                    }
                    c => {
                        if c != b'0' {
                            saw_nonzero = true;
                        }
                        if saw_nonzero {
                            digits -= 1;
                        }
                    }
                }
                i += 1;
            }
            if !has_point {
                if num.len() == 2 && num[1] == b'0' {
                    digits -= 1;
                }
                num.push(b'.');
            }
            while digits > 0 {
                num.push(b'0');
                digits -= 1;
            }
            num.extend_from_slice(&tail);
        }
        let s = String::from_utf8(num).unwrap_or_default();
        if self.f.plus || !s.starts_with('+') {
            if self.f.zero && !self.f.minus && self.f.wid_present && self.f.wid > s.len() as i64 {
                self.buf.push_str(&s[..1]);
                let w = self.f.wid - s.len() as i64;
                self.write_padding(w);
                self.buf.push_str(&s[1..]);
                return;
            }
            self.pad(&s);
            return;
        }
        self.pad(&s[1..]);
    }
}

fn rune_of(u: u64) -> char {
    u32::try_from(u)
        .ok()
        .and_then(char::from_u32)
        .unwrap_or('\u{FFFD}')
}

// ---------------------------------------------------------------------------
// strconv.FormatFloat

/// Decimal digits of |v| (no trailing zeros) and the decimal point position:
/// |v| = 0.d1d2d3… × 10^dp. Zero has no digits and dp 0.
fn decimal_digits(sci: &str) -> (Vec<u8>, i32) {
    let (mant, exp) = sci.split_once('e').unwrap_or((sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mut digits: Vec<u8> = mant.bytes().filter(u8::is_ascii_digit).collect();
    while digits.last() == Some(&b'0') {
        digits.pop();
    }
    if digits.is_empty() {
        return (digits, 0);
    }
    (digits, exp + 1)
}

/// The shortest digits that read back as `abs`. When two candidates are
/// exactly as close (the value lies halfway between them), Rust takes the
/// upper one and Go the even one (`1000000000000007.25` is
/// `1.0000000000000072e+15` in Go): Go's choice is made here.
fn shortest(abs: f64) -> (Vec<u8>, i32) {
    let (digits, dp) = decimal_digits(&format!("{abs:e}"));
    let n = digits.len();
    if n == 0 || !abs.is_finite() {
        return (digits, dp);
    }
    // The exact value's digits, well past the candidates' last one.
    let exact = format!("{:.*e}", n + 40, abs);
    let (mant, exp) = exact.split_once('e').unwrap_or((&exact, "0"));
    let all: Vec<u8> = mant.bytes().filter(u8::is_ascii_digit).collect();
    let exp: i32 = exp.parse().unwrap_or(0);
    if all.len() <= n || all[n] != b'5' || all[n + 1..].iter().any(|&d| d != b'0') {
        return (digits, dp);
    }
    // A tie between the truncation and the next candidate up.
    let lower = &all[..n];
    let even_is_lower = (lower[n - 1] - b'0').is_multiple_of(2);
    let mut pick: Vec<u8> = lower.to_vec();
    let mut pick_dp = exp + 1;
    if !even_is_lower {
        let mut i = n;
        loop {
            if i == 0 {
                pick.insert(0, b'1');
                pick.pop();
                pick_dp += 1;
                break;
            }
            i -= 1;
            if pick[i] == b'9' {
                pick[i] = b'0';
            } else {
                pick[i] += 1;
                break;
            }
        }
    }
    while pick.last() == Some(&b'0') {
        pick.pop();
    }
    // Only if it reads back as the same float (the interval may be lopsided
    // at a power of two).
    let text = format!("0.{}e{}", String::from_utf8_lossy(&pick), pick_dp);
    if text.parse::<f64>().ok() == Some(abs) {
        return (pick, pick_dp);
    }
    (digits, dp)
}

fn rounded(abs: f64, significant: usize) -> (Vec<u8>, i32) {
    decimal_digits(&format!("{:.*e}", significant.saturating_sub(1), abs))
}

fn fmt_e(out: &mut String, digits: &[u8], dp: i32, prec: i32, fmt: u8) {
    out.push(if digits.is_empty() {
        '0'
    } else {
        digits[0] as char
    });
    if prec > 0 {
        out.push('.');
        let m = digits.len().min(prec as usize + 1);
        for d in digits.iter().take(m).skip(1) {
            out.push(*d as char);
        }
        for _ in m.max(1)..=prec as usize {
            out.push('0');
        }
    }
    out.push(fmt as char);
    let mut exp = dp - 1;
    if digits.is_empty() {
        exp = 0;
    }
    if exp < 0 {
        out.push('-');
        exp = -exp;
    } else {
        out.push('+');
    }
    if exp < 10 {
        out.push('0');
    }
    out.push_str(&exp.to_string());
}

fn fmt_f(out: &mut String, digits: &[u8], dp: i32, prec: i32) {
    if dp > 0 {
        let m = digits.len().min(dp as usize);
        for d in &digits[..m] {
            out.push(*d as char);
        }
        for _ in m..dp as usize {
            out.push('0');
        }
    } else {
        out.push('0');
    }
    if prec > 0 {
        out.push('.');
        for i in 1..=prec {
            let j = dp + i - 1;
            let c = if j >= 0 && (j as usize) < digits.len() {
                digits[j as usize]
            } else {
                b'0'
            };
            out.push(c as char);
        }
    }
}

/// Go's `strconv.FormatFloat(v, fmt, prec, 64)` for `fmt` in `e E f g G b x X`
/// (`prec` −1 means the shortest representation that round-trips).
pub fn format_float(v: f64, fmt: u8, prec: i32) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    let neg = v.is_sign_negative();
    let abs = v.abs();
    let mut out = String::new();
    if fmt == b'b' {
        return format_b(v);
    }
    if fmt == b'x' || fmt == b'X' {
        return format_x(v, prec, fmt);
    }
    if neg {
        out.push('-');
    }
    let shortest_mode = prec < 0;
    match fmt {
        b'e' | b'E' => {
            let (digits, dp) = if shortest_mode {
                shortest(abs)
            } else {
                rounded(abs, prec as usize + 1)
            };
            let prec = if shortest_mode {
                (digits.len() as i32 - 1).max(0)
            } else {
                prec
            };
            fmt_e(&mut out, &digits, dp, prec, fmt);
        }
        b'f' => {
            if shortest_mode {
                let (digits, dp) = shortest(abs);
                let prec = (digits.len() as i32 - dp).max(0);
                fmt_f(&mut out, &digits, dp, prec);
            } else {
                out.push_str(&format!("{:.*}", prec as usize, abs));
            }
        }
        b'g' | b'G' => {
            let mut prec = prec;
            let (digits, dp) = if shortest_mode {
                let d = shortest(abs);
                prec = d.0.len() as i32;
                d
            } else {
                if prec == 0 {
                    prec = 1;
                }
                rounded(abs, prec as usize)
            };
            let nd = digits.len() as i32;
            let mut eprec = prec;
            if eprec > nd && nd >= dp {
                eprec = nd;
            }
            if shortest_mode {
                eprec = 6;
            }
            let exp = dp - 1;
            if exp < -4 || exp >= eprec {
                if prec > nd {
                    prec = nd;
                }
                fmt_e(&mut out, &digits, dp, prec - 1, fmt + b'e' - b'g');
            } else {
                if prec > dp {
                    prec = nd;
                }
                fmt_f(&mut out, &digits, dp, (prec - dp).max(0));
            }
        }
        _ => {
            out.push('%');
            out.push(fmt as char);
        }
    }
    out
}

fn float_parts(v: f64) -> (bool, u64, i32) {
    let bits = v.to_bits();
    let neg = bits >> 63 != 0;
    let mut exp = ((bits >> 52) & 0x7ff) as i32;
    let mut mant = bits & ((1u64 << 52) - 1);
    if exp == 0 {
        exp += 1;
    } else {
        mant |= 1u64 << 52;
    }
    exp -= 1023;
    (neg, mant, exp)
}

fn format_b(v: f64) -> String {
    let (neg, mant, exp) = float_parts(v);
    let exp = exp - 52;
    format!(
        "{}{}p{}{}",
        if neg { "-" } else { "" },
        mant,
        if exp >= 0 { "+" } else { "" },
        exp
    )
}

fn format_x(v: f64, prec: i32, fmt: u8) -> String {
    let (neg, mut mant, mut exp) = float_parts(v);
    if mant == 0 {
        exp = 0;
    }
    mant <<= 60 - 52;
    while mant != 0 && mant & (1u64 << 60) == 0 {
        mant <<= 1;
        exp -= 1;
    }
    if (0..15).contains(&prec) {
        let shift = (prec * 4) as u32;
        let extra = (mant << shift) & ((1u64 << 60) - 1);
        mant >>= 60 - shift;
        if extra | (mant & 1) > 1u64 << 59 {
            mant += 1;
        }
        mant <<= 60 - shift;
        if mant & (1u64 << 61) != 0 {
            mant >>= 1;
            exp += 1;
        }
    }
    let hex: &[u8] = if fmt == b'X' {
        b"0123456789ABCDEF"
    } else {
        b"0123456789abcdef"
    };
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    out.push('0');
    out.push(fmt as char);
    out.push((b'0' + ((mant >> 60) & 1) as u8) as char);
    mant <<= 4;
    if prec < 0 && mant != 0 {
        out.push('.');
        while mant != 0 {
            out.push(hex[((mant >> 60) & 15) as usize] as char);
            mant <<= 4;
        }
    } else if prec > 0 {
        out.push('.');
        for _ in 0..prec {
            out.push(hex[((mant >> 60) & 15) as usize] as char);
            mant <<= 4;
        }
    }
    out.push(if fmt == b'X' { 'P' } else { 'p' });
    if exp < 0 {
        out.push('-');
        exp = -exp;
    } else {
        out.push('+');
    }
    if exp < 10 {
        out.push('0');
    }
    out.push_str(&exp.to_string());
    out
}

// ---------------------------------------------------------------------------
// strconv.Quote and friends

/// Go's `strconv.IsPrint`, approximated: letters, marks, numbers,
/// punctuation, symbols and the ASCII space (unassigned code points are
/// treated as printable).
pub fn is_print(c: char) -> bool {
    let u = c as u32;
    if u < 0x80 {
        return (0x20..0x7f).contains(&u);
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    !matches!(u,
        0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x890..=0x891 | 0x8E2 | 0x180E
        | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x206F
        | 0xD800..=0xF8FF | 0xFEFF | 0xFFF9..=0xFFFB | 0x110BD | 0x110CD
        | 0x13430..=0x1343F | 0x1BCA0..=0x1BCA3 | 0x1D173..=0x1D17A | 0xE0001
        | 0xE0020..=0xE007F | 0xF0000..=0x10FFFF)
}

fn push_escaped(out: &mut String, c: char, quote: char, ascii_only: bool) {
    if c == quote || c == '\\' {
        out.push('\\');
        out.push(c);
        return;
    }
    if ascii_only {
        if (c as u32) < 0x80 && is_print(c) {
            out.push(c);
            return;
        }
    } else if is_print(c) {
        out.push(c);
        return;
    }
    match c {
        '\x07' => out.push_str("\\a"),
        '\x08' => out.push_str("\\b"),
        '\x0c' => out.push_str("\\f"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\x0b' => out.push_str("\\v"),
        c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
        c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
        c => out.push_str(&format!("\\U{:08x}", c as u32)),
    }
}

/// Go's `strconv.Quote`.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        push_escaped(&mut out, c, '"', false);
    }
    out.push('"');
    out
}

/// Go's `strconv.QuoteToASCII`.
pub fn quote_ascii(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        push_escaped(&mut out, c, '"', true);
    }
    out.push('"');
    out
}

fn quote_rune(c: char, ascii_only: bool) -> String {
    let mut out = String::from("'");
    push_escaped(&mut out, c, '\'', ascii_only);
    out.push('\'');
    out
}

fn can_backquote(s: &str) -> bool {
    s.chars()
        .all(|c| c != '`' && c != '\u{FEFF}' && (c == '\t' || !(c < ' ' || c == '\x7f')))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn s(v: &str) -> GoValue {
        GoValue::String(v.into())
    }

    #[test]
    fn float_v_like_go() {
        let cases = [
            (3.0, "3"),
            (123456.0, "123456"),
            (1e6, "1e+06"),
            (1234567.0, "1.234567e+06"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.5, "1.5"),
            (-2.25, "-2.25"),
            (0.0, "0"),
            (-0.0, "-0"),
            (1e21, "1e+21"),
            (1e100, "1e+100"),
            (0.1 + 0.2, "0.30000000000000004"),
            (f64::INFINITY, "+Inf"),
            (f64::NEG_INFINITY, "-Inf"),
            (f64::NAN, "NaN"),
            (5e-324, "5e-324"),
        ];
        for (v, want) in cases {
            assert_eq!(sprint_v(&GoValue::Float(v)), want, "{v}");
        }
    }

    #[test]
    fn shortest_ties_go_to_the_even_digit() {
        assert_eq!(
            format_float(1e15 + 7.25, b'g', -1),
            "1.0000000000000072e+15"
        );
        assert_eq!(
            format_float(1e15 + 1.25, b'g', -1),
            "1.0000000000000012e+15"
        );
        assert_eq!(format_float(0.1, b'g', -1), "0.1");
        assert_eq!(format_float(123.456, b'g', -1), "123.456");
    }

    #[test]
    fn format_float_modes() {
        assert_eq!(format_float(1e21, b'f', -1), "1000000000000000000000");
        assert_eq!(format_float(0.1, b'f', -1), "0.1");
        assert_eq!(format_float(1.1, b'f', -1), "1.1");
        assert_eq!(format_float(-0.0, b'f', -1), "-0");
        assert_eq!(format_float(1.0, b'e', -1), "1e+00");
        assert_eq!(format_float(1234.5678, b'e', 2), "1.23e+03");
        assert_eq!(format_float(1234.5678, b'g', 3), "1.23e+03");
        assert_eq!(format_float(1234.5678, b'g', 6), "1234.57");
        assert_eq!(format_float(100.0, b'g', 3), "100");
        assert_eq!(format_float(1.0, b'b', -1), "4503599627370496p-52");
        assert_eq!(format_float(3.0, b'x', -1), "0x1.8p+01");
        assert_eq!(format_float(1.0, b'x', 3), "0x1.000p+00");
        assert_eq!(format_float(0.0, b'x', -1), "0x0p+00");
        assert_eq!(format_float(2.5, b'f', 0), "2");
        assert_eq!(format_float(1e-7, b'g', -1), "1e-07");
    }

    #[test]
    fn verbs_and_flags() {
        let f = GoValue::Float;
        let i = GoValue::Int;
        let cases: Vec<(&str, Vec<GoValue>, &str)> = vec![
            ("%d", vec![f(8.0)], "%!d(float64=8)"),
            ("the largest %d", vec![i(8)], "the largest 8"),
            ("%s", vec![f(3.0)], "%!s(float64=3)"),
            ("%s", vec![GoValue::Bool(true)], "%!s(bool=true)"),
            ("%s", vec![GoValue::Nil], "%!s(<nil>)"),
            ("%v", vec![GoValue::Nil], "<nil>"),
            ("%s-%s", vec![s("a")], "a-%!s(MISSING)"),
            ("%s", vec![s("a"), s("b")], "a%!(EXTRA string=b)"),
            ("abc", vec![s("foo")], "abc%!(EXTRA string=foo)"),
            (
                "%s",
                vec![s("a"), f(1.5), GoValue::Nil],
                "a%!(EXTRA float64=1.5, <nil>)",
            ),
            ("%05d", vec![i(42)], "00042"),
            ("%-5d|", vec![i(42)], "42   |"),
            ("%+d", vec![i(42)], "+42"),
            ("%x", vec![i(255)], "ff"),
            ("%#x", vec![i(255)], "0xff"),
            ("%X", vec![i(255)], "FF"),
            ("%o", vec![i(8)], "10"),
            ("%O", vec![i(8)], "0o10"),
            ("%b", vec![i(5)], "101"),
            ("%c", vec![i(65)], "A"),
            ("%q", vec![i(65)], "'A'"),
            ("%U", vec![i(65)], "U+0041"),
            ("%#U", vec![i(0x1F600)], "U+1F600 '😀'"),
            ("%.3d", vec![i(7)], "007"),
            ("%.2f", vec![f(1.23456)], "1.23"),
            ("%8.3f|", vec![f(-1.23456)], "  -1.235|"),
            ("%08.3f", vec![f(-1.23456)], "-001.235"),
            ("%e", vec![f(1234.5678)], "1.234568e+03"),
            ("%E", vec![f(1234.5678)], "1.234568E+03"),
            ("%g", vec![f(1234.5678)], "1234.5678"),
            ("%+v", vec![f(3.0)], "3"),
            ("%+.1f", vec![f(3.0)], "+3.0"),
            ("% d", vec![i(3)], " 3"),
            ("%F", vec![f(1.0)], "1.000000"),
            ("%#g", vec![f(1.0)], "1.00000"),
            ("%t", vec![GoValue::Bool(false)], "false"),
            ("%q", vec![s("a\"b\n")], "\"a\\\"b\\n\""),
            ("%#q", vec![s("ab")], "`ab`"),
            ("%+q", vec![s("é")], "\"\\u00e9\""),
            ("%x", vec![s("hi")], "6869"),
            ("% x", vec![s("hi")], "68 69"),
            ("%#X", vec![s("hi")], "0X6869"),
            ("%.2s", vec![s("héllo")], "hé"),
            ("%5s|", vec![s("ab")], "   ab|"),
            ("%-5s|", vec![s("ab")], "ab   |"),
            ("%T", vec![f(1.0)], "float64"),
            ("%T", vec![GoValue::Nil], "<nil>"),
            ("%T", vec![GoValue::Slice(vec![])], "[]interface {}"),
            ("%%", vec![], "%"),
            ("100%", vec![], "100%!(NOVERB)"),
            ("%[2]s %[1]s", vec![s("a"), s("b")], "b a"),
            ("%[3]s", vec![s("a")], "%!s(BADINDEX)"),
            ("%*d", vec![i(5), i(42)], "   42"),
            ("%*d", vec![s("x"), i(42)], "%!(BADWIDTH)42"),
            ("%.*f", vec![i(1), f(2.25)], "2.2"),
            ("%z", vec![s("a")], "%!z(string=a)"),
            ("%p", vec![s("a")], "%!p(string=a)"),
            ("%d", vec![GoValue::Bool(true)], "%!d(bool=true)"),
            ("%5d", vec![s("ab")], "%!d(string=   ab)"),
            ("%v", vec![f(1.0), f(2.0)], "1%!(EXTRA float64=2)"),
        ];
        for (format, args, want) in cases {
            assert_eq!(sprintf(format, &args), want, "{format}");
        }
    }

    #[test]
    fn composite_values() {
        let mut m = BTreeMap::new();
        m.insert("b".to_string(), GoValue::Float(2.0));
        m.insert("a".to_string(), GoValue::String("x".into()));
        let map = GoValue::Map(m);
        let slice = GoValue::Slice(vec![
            s("a"),
            GoValue::Float(1.5),
            GoValue::Bool(true),
            GoValue::Nil,
        ]);
        assert_eq!(sprint_v(&map), "map[a:x b:2]");
        assert_eq!(sprint_v(&slice), "[a 1.5 true <nil>]");
        assert_eq!(
            sprintf("%d", std::slice::from_ref(&slice)),
            "[%!d(string=a) %!d(float64=1.5) %!d(bool=true) <nil>]"
        );
        assert_eq!(
            sprintf("%s", std::slice::from_ref(&map)),
            "map[a:x b:%!s(float64=2)]"
        );
        assert_eq!(
            sprintf("%q", &[GoValue::Slice(vec![s("a"), s("b")])]),
            "[\"a\" \"b\"]"
        );
        assert_eq!(
            sprintf("%#v", std::slice::from_ref(&map)),
            "map[string]interface {}{\"a\":\"x\", \"b\":2}"
        );
        assert_eq!(
            sprintf("%#v", &[GoValue::Slice(vec![s("a"), GoValue::Nil])]),
            "[]interface {}{\"a\", interface {}(nil)}"
        );
        assert_eq!(
            sprint_v(&GoValue::Slice(vec![map.clone()])),
            "[map[a:x b:2]]"
        );
    }
}
