//! Go's `ValidateParameters` (validate.go): every message is a
//! `field.Required` error on `parameters`.

use serde_json::Value;
use xfn_sdk::Request;

use crate::fields::{get_integer, get_string, get_value_into, prefix_field};
use crate::input::{MultiPrefix, Parameters, text};
use crate::ip::parse_cidr;

fn required(detail: impl std::fmt::Display) -> String {
    format!("parameters: Required value: {detail}")
}

fn prefix_parameter(p: &Parameters, oxr: &Value, req: &Request) -> Result<(), String> {
    let (mut prefix, field) = (text(&p.prefix).to_owned(), text(&p.prefix_field));
    if !prefix.is_empty() && !field.is_empty() {
        return Err(required(
            "specify only one of prefix or prefixField to avoid ambiguous function input",
        ));
    }
    if prefix.is_empty() {
        if field.is_empty() {
            return Err(required(
                "either prefix or prefixField function input is required",
            ));
        }
        prefix = prefix_field(field, oxr, req)
            .map_err(|e| required(format!("cannot get prefix at prefixField {field}: {e}")))?;
    }
    parse_cidr(&prefix).map_err(|_| required(format!("invalid CIDR prefix address {prefix}")))?;
    Ok(())
}

fn cidr_host(p: &Parameters, oxr: &Value) -> Result<(), String> {
    let (num, field) = (p.host_num.unwrap_or(0), text(&p.host_num_field));
    if num > 0 && !field.is_empty() {
        return Err(required(
            "specify only one of hostnum or hostnumfield to avoid ambiguous function input",
        ));
    }
    if num == 0 {
        if field.is_empty() {
            return Err(required(
                "either hostnum or hostnumfield function input is required",
            ));
        }
        get_integer(oxr, field)
            .map_err(|_| required(format!("cannot get hostnum at hostnumfield {field}")))?;
    }
    Ok(())
}

fn new_bits_len(p: &Parameters) -> usize {
    p.new_bits.as_ref().map_or(0, Vec::len)
}

fn cidr_subnet(p: &Parameters) -> Result<(), String> {
    let field = text(&p.new_bits_field);
    if new_bits_len(p) > 0 && !field.is_empty() {
        return Err(required(
            "specify only one of newbits or newbitsfield to avoid ambiguous function input",
        ));
    }
    if new_bits_len(p) == 0 && field.is_empty() {
        return Err(required(
            "either newbits or newbitsfield function input is required",
        ));
    }
    if field.is_empty() && new_bits_len(p) != 1 {
        return Err(required(
            "cidrFunc cidrsubnet requires exactly 1 parameter in the array",
        ));
    }
    if p.net_num.unwrap_or(0) > 0 && !text(&p.net_num_field).is_empty() {
        return Err(required(
            "cidrFunc cidrsubnet requires either one of netnum or netnumfield",
        ));
    }
    Ok(())
}

fn cidr_subnets(p: &Parameters, oxr: &Value) -> Result<(), String> {
    let field = text(&p.new_bits_field);
    if new_bits_len(p) > 0 && !field.is_empty() {
        return Err(required(
            "cidrFunc cidrsubnets requires either one of newbits or newbitsfield",
        ));
    }
    if !field.is_empty() {
        get_value_into::<Vec<i64>>(oxr, field, "[]int")
            .map_err(|_| required(format!("cannot get newbits at newbitsfield {field}")))?;
    }
    Ok(())
}

fn cidr_subnetloop(p: &Parameters) -> Result<(), String> {
    let count = p.net_num_count.unwrap_or(0) > 0 || !text(&p.net_num_count_field).is_empty();
    let items = p.net_num_items.as_ref().is_some_and(|i| !i.is_empty())
        || !text(&p.net_num_items_field).is_empty();
    if p.net_num_count.unwrap_or(0) > 0 && !text(&p.net_num_count_field).is_empty() {
        return Err(required(
            "cidrFunc cidrsubnetloop requires either one of netnumcount or netnumcountfield, \
             but only if nonetnumitems or netnumitemsfield have been specified",
        ));
    }
    if p.net_num_items.as_ref().is_some_and(|i| !i.is_empty())
        && !text(&p.net_num_items_field).is_empty()
    {
        return Err(required(
            "cidrFunc cidrsubnetloop requires either one of netnumitems or netnumitemsfield, \
             but only if nonetnumcount or netnumcountfield have been specified",
        ));
    }
    if count && items {
        return Err(required(
            "cidrFunc cidrsubnetloop requires either one of netnumitems or netnumitemsfield, \
             or mutually exclusive one of netnumcount or netnumcountfield, but not both counts and items",
        ));
    }
    if new_bits_len(p) > 0 && !text(&p.new_bits_field).is_empty() {
        return Err(required(
            "cidrFunc cidrsubnetloop requires either one of newbits or newbitsfield",
        ));
    }
    if p.offset.unwrap_or(0) > 0 && !text(&p.offset_field).is_empty() {
        return Err(required(
            "cidrFunc cidrsubnetloop requires either one of offset or offsetfield",
        ));
    }
    Ok(())
}

/// The multi-prefixes, from the input or the XR field.
pub fn multi_prefixes(p: &Parameters, oxr: &Value) -> Result<Vec<MultiPrefix>, String> {
    let field = text(&p.multi_prefix_field);
    match p.multi_prefix.as_ref().filter(|m| !m.is_empty()) {
        Some(m) => Ok(m.clone()),
        None if field.is_empty() => Ok(Vec::new()),
        None => Ok(
            get_value_into::<Vec<MultiPrefix>>(oxr, field, "[]v1beta1.MultiPrefix")?
                .unwrap_or_default(),
        ),
    }
}

fn multi_prefix(p: &Parameters, oxr: &Value) -> Result<(), String> {
    let (n, field) = (
        p.multi_prefix.as_ref().map_or(0, Vec::len),
        text(&p.multi_prefix_field),
    );
    if n > 0 && !field.is_empty() {
        return Err(required(
            "specify only one of multiPrefix or multiPrefixField to avoid ambiguous function input",
        ));
    }
    if n == 0 && field.is_empty() {
        return Err(required(
            "either multiPrefix or multiPrefixField function input is required",
        ));
    }
    let prefixes = multi_prefixes(p, oxr).map_err(|_| {
        required(format!(
            "cannot get multiPrefixes at multiPrefixField {field}"
        ))
    })?;
    for mp in prefixes {
        let prefix = text(&mp.prefix);
        if parse_cidr(prefix).is_err() {
            return Err(required(format!("invalid CIDR prefix address {prefix}")));
        }
        if mp.new_bits.as_ref().is_none_or(Vec::is_empty) {
            return Err(required(
                "newBits is required for each prefix in multiPrefixField",
            ));
        }
    }
    Ok(())
}

/// Go's `ValidateParameters`.
pub fn validate(p: &Parameters, oxr: &Value, req: &Request) -> Result<(), String> {
    let mut cidr_func = text(&p.cidr_func).to_owned();
    let func_field = text(&p.cidr_func_field);
    if !func_field.is_empty() {
        cidr_func = get_string(oxr, func_field)
            .map_err(|_| required(format!("cannot get cidrFunc at cidrFuncField {func_field}")))?;
    }
    if cidr_func != "multiprefixloop" {
        prefix_parameter(p, oxr, req)?;
    }
    match cidr_func.as_str() {
        "" => Err(required("cidrFunc is required")),
        "cidrhost" => cidr_host(p, oxr),
        "cidrnetmask" => Ok(()),
        "cidrsubnet" => cidr_subnet(p),
        "cidrsubnets" => cidr_subnets(p, oxr),
        "cidrsubnetloop" => cidr_subnetloop(p),
        "multiprefixloop" => multi_prefix(p, oxr),
        other => Err(required(format!("unexpected cidrFunc {other}"))),
    }
}
