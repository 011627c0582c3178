#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| xfn_tests::fuzz::field_path(data));
