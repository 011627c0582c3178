#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| xfn_tests::fuzz::oci_config(data));
