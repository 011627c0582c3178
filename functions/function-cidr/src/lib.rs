//! function-cidr, ported to Rust for xfn.
//!
//! A port of upbound/function-cidr v0.7.0: CIDR calculations whose inputs
//! come from the function's input, the observed XR, the desired state or
//! the context, written to a field of the desired XR (by default
//! `status.atFunction.cidr`). Differences are listed in the README.

pub mod cidr;
pub mod fields;
pub mod input;
pub mod ip;
pub mod validate;

use std::collections::BTreeMap;

use serde_json::{Map, Value};
use xfn_sdk::{Request, Resource, Response, fieldpath};

use crate::fields::{get_integer, get_string, get_value_into, prefix_field};
use crate::input::{Parameters, text};

/// The function, for [`xfn_sdk::export!`].
pub struct Cidr;

impl xfn_sdk::Function for Cidr {
    fn run(request: &Request) -> Result<Response, xfn_sdk::Error> {
        run(request).map_err(xfn_sdk::Error::from)
    }
}

xfn_sdk::export!(Cidr);

/// Where Go's function crashes (a fatal result of a nil error): the call
/// fails with the error Go dropped.
fn crash(what: &str, e: String) -> String {
    format!("{what}: {e} (function-cidr v0.7.0 crashes here: it reports a nil error)")
}

/// Runs the function on one request (Go's `RunFunction`). `Err` is a failed
/// call, where the Go function crashes.
pub fn run(req: &Request) -> Result<Response, String> {
    let mut rsp = Response::to(req);
    let p: Parameters = match xfn_select::input::decode(req, "*v1beta1.Parameters") {
        Ok(p) => p,
        Err(e) => {
            rsp.fatal(format!("cannot get Function input: {e}"));
            return Ok(rsp);
        }
    };
    let oxr = Value::Object(
        req.observed_composite()
            .and_then(|r| r.resource.clone())
            .unwrap_or_default(),
    );
    if let Err(e) = validate::validate(&p, &oxr, req) {
        rsp.fatal(format!("invalid Function input: {e}"));
        return Ok(rsp);
    }
    let kind = oxr
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let api_version = oxr
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let mut dxr = Value::Object(
        req.desired_composite()
            .and_then(|r| r.resource.clone())
            .unwrap_or_default(),
    );
    if let Value::Object(o) = &mut dxr {
        o.insert("apiVersion".into(), api_version.into());
        o.insert("kind".into(), kind.clone().into());
    }

    let mut cidr_func = text(&p.cidr_func).to_owned();
    if !text(&p.cidr_func_field).is_empty() {
        match get_string(&oxr, text(&p.cidr_func_field)) {
            Ok(f) => cidr_func = f,
            Err(e) => {
                rsp.fatal(format!(
                    "cannot get cidrFunc from field {} for {kind}: {e}",
                    text(&p.cidr_func)
                ));
                return Ok(rsp);
            }
        }
    }
    let mut prefix = text(&p.prefix).to_owned();
    if cidr_func != "multiprefixloop" && !text(&p.prefix_field).is_empty() {
        match prefix_field(text(&p.prefix_field), &oxr, req) {
            Ok(v) => prefix = v,
            Err(e) => {
                rsp.fatal(format!(
                    "cannot get prefix from field {} for {kind}: {e}",
                    text(&p.prefix_field)
                ));
                return Ok(rsp);
            }
        }
    }
    let field = match text(&p.output_field) {
        "" => "status.atFunction.cidr".to_owned(),
        f => f.to_owned(),
    };

    macro_rules! fatal {
        ($($arg:tt)*) => {{
            rsp.fatal(format!($($arg)*));
            return Ok(rsp);
        }};
    }
    let new_bits = |rsp: &mut Response| -> Option<Vec<i64>> {
        let f = text(&p.new_bits_field);
        if f.is_empty() {
            return Some(p.new_bits.clone().unwrap_or_default());
        }
        match get_value_into::<Vec<i64>>(&oxr, f, "[]int") {
            Ok(v) => Some(v.unwrap_or_default()),
            Err(e) => {
                rsp.fatal(format!("cannot get newbits from field {f} of {kind}: {e}"));
                None
            }
        }
    };

    let value: Value = match cidr_func.as_str() {
        "cidrhost" => {
            let mut host = p.host_num.unwrap_or(0);
            if !text(&p.host_num_field).is_empty() {
                match get_integer(&oxr, text(&p.host_num_field)) {
                    Ok(h) => host = h,
                    Err(e) => fatal!(
                        "cannot get hostnum from field {} for {kind}: {e}",
                        text(&p.host_num_field)
                    ),
                }
            }
            let host = cidr::cidr_host(&prefix, host)
                .map_err(|e| crash(&format!("cannot calculate CIDR host number for {kind}"), e))?;
            Value::String(host)
        }
        "cidrnetmask" => {
            let mask = cidr::cidr_netmask(&prefix)
                .map_err(|e| crash(&format!("cannot calculate CIDR netmask for {kind}"), e))?;
            Value::String(mask)
        }
        "cidrsubnet" => {
            let Some(bits) = new_bits(&mut rsp) else {
                return Ok(rsp);
            };
            let mut net_num = p.net_num.unwrap_or(0);
            if !text(&p.net_num_field).is_empty() {
                match get_integer(&oxr, text(&p.net_num_field)) {
                    Ok(n) => net_num = n,
                    Err(e) => fatal!(
                        "cannot get netnum from field {} for {kind}: {e}",
                        text(&p.net_num_field)
                    ),
                }
            }
            let first = *bits
                .first()
                .ok_or_else(|| crash("newbits", "the list is empty (Go indexes it)".to_owned()))?;
            let cidr = cidr::cidr_subnet(&prefix, first, net_num)
                .map_err(|e| crash(&format!("cannot calculate subnet CIDR for {kind}"), e))?;
            Value::String(cidr)
        }
        "cidrsubnets" => {
            let Some(bits) = new_bits(&mut rsp) else {
                return Ok(rsp);
            };
            match cidr::cidr_subnets(&prefix, &bits) {
                Ok(Some(list)) => Value::Array(list.into_iter().map(Value::String).collect()),
                Ok(None) => Value::Null,
                Err(e) => fatal!("cannot calculate Subnet CIDRs for {kind}: {e}"),
            }
        }
        "cidrsubnetloop" => {
            let Some(bits) = new_bits(&mut rsp) else {
                return Ok(rsp);
            };
            let mut offset = p.offset.unwrap_or(0);
            if !text(&p.offset_field).is_empty() {
                match get_integer(&oxr, text(&p.offset_field)) {
                    Ok(o) => offset = o,
                    Err(e) => fatal!(
                        "cannot get offset from field {} for {kind}: {e}",
                        text(&p.offset_field)
                    ),
                }
            }
            let mut items = p.net_num_items.clone().unwrap_or_default();
            if !text(&p.net_num_items_field).is_empty() {
                match get_value_into::<Vec<String>>(&oxr, text(&p.net_num_items_field), "[]string")
                {
                    Ok(v) => items = v.unwrap_or_default(),
                    Err(e) => fatal!(
                        "cannot get netnumitems from field {} for {kind}: {e}",
                        text(&p.net_num_items_field)
                    ),
                }
            }
            let mut count = p.net_num_count.unwrap_or(0).max(items.len() as i64);
            if !text(&p.net_num_count_field).is_empty() {
                match get_integer(&oxr, text(&p.net_num_count_field)) {
                    Ok(c) => count = c,
                    Err(e) => fatal!(
                        "cannot get netnumcount from field {} for {kind}: {e}",
                        text(&p.net_num_count_field)
                    ),
                }
            }
            const MAX_LOOP: i64 = 1 << 16;
            if count > MAX_LOOP {
                return Err(format!(
                    "cidrsubnetloop: a count of {count} subnets is more than xfn allows ({MAX_LOOP})"
                ));
            }
            let mut list = Vec::new();
            for n in 0..count.max(0) {
                let first = *bits.first().ok_or_else(|| {
                    crash("newbits", "the list is empty (Go indexes it)".to_owned())
                })?;
                let cidr = cidr::cidr_subnet(&prefix, first, n + offset)
                    .map_err(|e| crash(&format!("cannot calculate subnet CIDR for {kind}"), e))?;
                list.push(Value::String(cidr));
            }
            if list.is_empty() {
                Value::Null
            } else {
                Value::Array(list)
            }
        }
        "multiprefixloop" => {
            let prefixes = match validate::multi_prefixes(&p, &oxr) {
                Ok(m) => m,
                Err(e) => fatal!(
                    "cannot get multiprefix from field {} for {kind}: {e}",
                    text(&p.multi_prefix_field)
                ),
            };
            let mut by_prefix: BTreeMap<String, Value> = BTreeMap::new();
            for mp in prefixes {
                let prefix = text(&mp.prefix).to_owned();
                let mut bits = mp.new_bits.clone().unwrap_or_default();
                if prefix.is_empty() || bits.is_empty() {
                    continue;
                }
                let offset = mp.offset.unwrap_or(0);
                if offset > 0 {
                    bits.insert(0, offset);
                }
                let list = match cidr::cidr_subnets(&prefix, &bits) {
                    Ok(list) => list.unwrap_or_default(),
                    Err(e) => fatal!("cannot calculate Subnet CIDRs for {kind}: {e}"),
                };
                let skip = usize::from(offset > 0);
                by_prefix.insert(
                    prefix,
                    Value::Array(list.into_iter().skip(skip).map(Value::String).collect()),
                );
            }
            Value::Object(by_prefix.into_iter().collect::<Map<String, Value>>())
        }
        // Validation refused every other function.
        _ => return Ok(rsp),
    };
    if let Err(e) = fieldpath::set(&mut dxr, &field, value) {
        fatal!("cannot set field {field} for {kind}: {e}");
    }
    let mut composite = Resource::from_object(match dxr {
        Value::Object(o) => o,
        _ => Map::new(),
    });
    composite.connection_details = req
        .desired_composite()
        .map(|r| r.connection_details.clone())
        .unwrap_or_default();
    rsp.set_desired_composite(composite);
    Ok(rsp)
}
