//! Prints the CustomResourceDefinition of the function's input, made from
//! its type (`make crd` writes it to package/input/, where `xfn push
//! --package` picks it up).

use {{crate}}::Input;

fn main() {
    match xfn_sdk::crd::input_crd_yaml::<Input>() {
        Ok(yaml) => print!("{yaml}"),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
