#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| xfn_tests::fuzz::pt_input(data));
