//! Runs a KCL file and prints its result: `ok <canonical value>`,
//! `unsupported <feature>` or `error <message>` (a development aid:
//! `cargo run -p xfn-kcl --example kcl_run -- FILE [NAME=JSON ...]`).

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: kcl_run FILE [OPTION=JSON ...]");
        std::process::exit(2);
    };
    let src = match std::fs::read_to_string(&path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("cannot read {path}: {e}");
            std::process::exit(2);
        }
    };
    let mut opts = xfn_kcl::RunOptions::default();
    for a in args {
        let Some((k, v)) = a.split_once('=') else {
            continue;
        };
        match xfn_kcl::Value::from_json_text(v) {
            Ok(v) => {
                opts.options.insert(k.to_string(), v);
            }
            Err(e) => {
                eprintln!("option {k}: {e}");
                std::process::exit(2);
            }
        }
    }
    let start = std::time::Instant::now();
    let out = xfn_kcl::run(&src, &opts);
    let took = start.elapsed();
    match out {
        Ok(o) => match o.stream {
            Some(docs) if docs.len() != 1 => {
                println!("ok stream:{}", xfn_kcl::Value::list(docs).canonical())
            }
            Some(docs) => println!("ok {}", docs[0].canonical()),
            None => println!("ok {}", xfn_kcl::Value::dict(o.values).canonical()),
        },
        Err(e) => match e.unsupported_feature() {
            Some(f) => println!("unsupported {f}"),
            None => println!("error {e}"),
        },
    }
    if std::env::var_os("KCL_RUN_TIME").is_some() {
        eprintln!("took {took:?}");
    }
}
