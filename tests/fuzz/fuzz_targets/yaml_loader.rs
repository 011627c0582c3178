#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| xfn_tests::fuzz::yaml_loader(data));
